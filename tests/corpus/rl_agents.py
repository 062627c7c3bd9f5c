"""Two reinforcement-learning agents in the style of the NumPy RL tutorials: a linear
Q-learning agent that explores epsilon-greedily and decays its epsilon on `self`, and a
one-step actor-critic whose softmax policy samples actions with `rng.choice(n, p=probs)`.
Both hold their own `np.random.Generator`, update weight rows in place by action index,
and count steps in an int attribute."""

import numpy as np


class QAgent:
    def __init__(self, n_obs, n_actions, lr=0.1, gamma=0.9, eps=1.0, eps_min=0.05, eps_decay=0.97, seed=0):
        self.rng = np.random.default_rng(seed)
        self.W = np.zeros((n_actions, n_obs))
        self.n_actions = n_actions
        self.lr, self.gamma = lr, gamma
        self.eps, self.eps_min, self.eps_decay = eps, eps_min, eps_decay
        self.steps = 0

    def q_values(self, s):
        return self.W @ s

    def act(self, s):
        if self.rng.random() < self.eps:
            return self.rng.integers(self.n_actions)
        return np.argmax(self.q_values(s))

    def learn(self, s, a, r, s_next, done):
        target = r if done else r + self.gamma * np.max(self.q_values(s_next))
        td_error = target - self.q_values(s)[a]
        self.W[a] += self.lr * td_error * s
        self.steps += 1
        self.eps = max(self.eps_min, self.eps * self.eps_decay)
        return td_error


class ActorCritic:
    def __init__(self, n_obs, n_actions, alpha_theta=0.05, alpha_w=0.1, gamma=0.9, seed=0):
        self.rng = np.random.default_rng(seed)
        self.theta = np.zeros((n_obs, n_actions))
        self.w = np.zeros(n_obs)
        self.n_actions = n_actions
        self.alpha_theta, self.alpha_w, self.gamma = alpha_theta, alpha_w, gamma

    def policy(self, s):
        z = s @ self.theta
        z = z - np.max(z)
        e = np.exp(z)
        return e / np.sum(e)

    def act(self, s):
        probs = self.policy(s)
        return self.rng.choice(self.n_actions, p=probs)

    def update(self, s, a, r, s_next, done):
        v = s @ self.w
        v_next = 0.0 if done else s_next @ self.w
        delta = r + self.gamma * v_next - v
        self.w += self.alpha_w * delta * s
        probs = self.policy(s)
        grad = -np.outer(s, probs)
        grad[:, a] += s
        self.theta += self.alpha_theta * delta * grad
        return delta


class Corridor:
    """States 0..n-1 seen as one-hot vectors; action 1 moves right, 0 left; reward 1 at the right end."""

    def __init__(self, n=6):
        self.n = n
        self.pos = 0

    def observe(self):
        s = np.zeros(self.n)
        s[self.pos] = 1.0
        return s

    def reset(self):
        self.pos = 0
        return self.observe()

    def step(self, action):
        self.pos = min(self.n - 1, self.pos + 1) if action == 1 else max(0, self.pos - 1)
        done = self.pos == self.n - 1
        return self.observe(), (1.0 if done else -0.01), done
