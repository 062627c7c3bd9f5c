"""Deep RL: REINFORCE with a baseline on cart-pole dynamics written in NumPy.

    python -m examples.models.reinforce [--steps N] [--interpreter]

The environment is the classic cart-pole (Barto, Sutton & Anderson 1983;
the equations and constants of the usual benchmark), stepped with Euler
integration; an episode ends when the pole falls past 12 degrees, the cart
leaves [-2.4, 2.4], or after 200 steps. The policy is an MLP (4 -> 32 -> 2)
sampled with a seeded Generator. Each training step plays one episode in the
interpreter (a `while` loop whose trip count depends on the data) and then
runs the compiled update on the whole trajectory: its length changes every
episode, so pyfront relaxes the time dim to a dynamic size. The loss is
-mean(log pi(a_t|s_t) * A_t) with A_t the normalized discounted return.
Adam, lr 0.01. The policy computes in float64: sampled actions feed back
into the data, and in float32 the last-bit differences between compiled and
interpreted arithmetic (summation order) eventually flip one sampled action,
after which the two runs play different episodes (seen at episode 74). In
float64 the runs agree to 1e-7 for 100 episodes; training still amplifies
last-bit differences (about x1.25 per episode: Adam rescales tiny gradient
entries) until an action flips near episode 180, so the equality test stops
at 100 episodes.

Target: mean episode length over the last 20 episodes >= 3x that of the first
20 (random play lasts about 20 steps) after 100 episodes; the curve logged is
the policy loss, and `evaluate` returns the mean length of 20 greedy episodes.
"""

from __future__ import annotations

import numpy as np

import pyfront
from examples.models.common import Parameters, Training, main, step_function
from examples.models.optim import Adam
from pyfront import nn

HIDDEN = 32
MAX_STEPS = 200
GAMMA = 0.99


class CartPole:
    """Cart-pole physics; `step` returns whether the episode goes on."""

    gravity, cart_mass, pole_mass, half_length, force_mag, dt = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def __init__(self, rng: np.random.Generator):
        self.state = rng.uniform(-0.05, 0.05, 4)

    def step(self, action: int) -> bool:
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        cos, sin = np.cos(theta), np.sin(theta)
        total_mass = self.cart_mass + self.pole_mass
        temp = (force + self.pole_mass * self.half_length * theta_dot**2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos**2 / total_mass)
        )
        x_acc = temp - self.pole_mass * self.half_length * theta_acc * cos / total_mass
        self.state = np.array(
            [x + self.dt * x_dot, x_dot + self.dt * x_acc, theta + self.dt * theta_dot, theta_dot + self.dt * theta_acc]
        )
        return abs(self.state[0]) <= 2.4 and abs(self.state[2]) <= 12 * np.pi / 180


class Policy(Parameters):
    names = ("w1", "b1", "w2", "b2")

    @classmethod
    def init(cls, rng: np.random.Generator) -> Policy:
        return cls(
            w1=rng.standard_normal((4, HIDDEN)) * 0.5,
            b1=np.zeros(HIDDEN),
            w2=rng.standard_normal((HIDDEN, 2)) * 0.1,
            b2=np.zeros(2),
        )


def action_logits(params, states):
    w1, b1, w2, b2 = params
    return np.tanh(states @ w1 + b1) @ w2 + b2


def loss_fn(params, states, actions, advantages):
    """-mean(log pi(a|s) * advantage); `actions` one-hot (T, 2)."""
    log_probs = (nn.log_softmax(action_logits(params, states), axis=-1) * actions).sum(axis=1)
    return -(log_probs * advantages).mean()


def train_step(policy, opt, states, actions, advantages):
    loss, grads = pyfront.value_and_grad(loss_fn)(policy.param_list(), states, actions, advantages)
    opt.update(policy.params, policy.names, grads)
    return loss


def play(policy, rng: np.random.Generator, greedy: bool = False):
    """One episode: states (T, 4), one-hot actions (T, 2), rewards (T,), all float64."""
    env = CartPole(rng)
    states, actions = [], []
    alive = True
    while alive and len(states) < MAX_STEPS:
        state = env.state
        logits = action_logits(policy.param_list(), state[None, :])[0]
        p_right = 1.0 / (1.0 + np.exp(logits[0] - logits[1]))
        action = int(p_right > 0.5) if greedy else int(rng.random() < p_right)
        states.append(state)
        actions.append(np.eye(2)[action])
        alive = env.step(action)
    return np.stack(states), np.stack(actions), np.ones(len(states))


def advantages_of(rewards: np.ndarray) -> np.ndarray:
    """Discounted returns, normalized to mean 0 and std 1 (the baseline)."""
    returns = np.zeros_like(rewards)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + GAMMA * running
        returns[t] = running
    return (returns - returns.mean()) / (returns.std() + 1e-8)


def make(seed: int):
    """The policy, and the Generator that drives evaluation episodes."""
    return Policy.init(np.random.default_rng(seed)), {"eval_seed": seed + 1000, "episode_lengths": []}


def trainer(seed: int = 0, compile: bool = True, backend: str = "cpu") -> Training:
    """One step per episode; `data["episode_lengths"]` records how long each lasted."""
    policy, data = make(seed)
    opt = Adam(policy.params, lr=0.01)
    rng = np.random.default_rng(seed + 1)

    def next_args():
        states, actions, rewards = play(policy, rng)
        data["episode_lengths"].append(len(rewards))
        return policy, opt, states, actions, advantages_of(rewards)

    return Training(step_function(train_step, compile, backend), next_args, policy, data)


def train(steps: int, compile: bool = True, seed: int = 0, backend: str = "cpu") -> Training:
    """`steps` training steps from `seed`; the step compiled for `backend` unless compile=False."""
    return trainer(seed, compile, backend).run(steps)


def evaluate(policy, data) -> float:
    """Mean length of 20 greedy episodes (200 is the maximum)."""
    rng = np.random.default_rng(data["eval_seed"])
    return float(np.mean([len(play(policy, rng, greedy=True)[2]) for _ in range(20)]))


if __name__ == "__main__":
    main(__doc__, train, evaluate, steps=300, metric="greedy episode length")
