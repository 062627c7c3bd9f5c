"""The model suite's deep RL (examples/models/reinforce.py): one REINFORCE update on a cart-pole trajectory.

The model's own `train_step` (policy MLP, log-softmax policy-gradient loss,
`pyfront.value_and_grad`, Adam written into the dicts) in float64, as the
model runs it; the benchmarked function also returns the arrays it wrote.
The trajectory is made outside the step, as in training: cart-pole episodes
played by the initial policy, cut to the size's length ("batch", the time
dim, which changes every episode in training).
"""

import numpy as np

from bench.program import Port, Program
from bench.programs._model_suite import NUMBA, jax_inputs, jax_train_step, optimizer_state
from examples.models import reinforce
from examples.models.optim import Adam


def make_optimizer(params):
    return Adam(params, lr=0.01)  # as reinforce.trainer


def train_step(policy, opt, states, actions, advantages):
    loss = reinforce.train_step(policy, opt, states, actions, advantages)
    return loss, policy.param_list(), optimizer_state(opt, policy.names)


def make_inputs(size, rng):
    policy, _ = reinforce.make(0)
    steps = size["batch"]
    states, actions = [], []
    while len(states) < steps:
        episode_states, episode_actions, _ = reinforce.play(policy, rng)
        states.extend(episode_states)
        actions.extend(episode_actions)
    advantages = reinforce.advantages_of(np.ones(steps))
    return policy, make_optimizer(policy.params), np.stack(states[:steps]), np.stack(actions[:steps]), advantages


PROGRAM = Program(
    name="model_reinforce",
    description="model suite REINFORCE: policy-gradient update on a 64-step cart-pole trajectory (value_and_grad; Adam), float64",
    fn=train_step,
    make_inputs=make_inputs,
    sizes={"T64": {"batch": 64}},
    ports={"numba": NUMBA, "jax": Port(jax_train_step(reinforce.loss_fn, make_optimizer),
                       lambda inputs: (*jax_inputs(*inputs[:2]), *inputs[2:]))},
    stateful=True,
    rtol=1e-6,
    atol=1e-9,
)
