"""A feed-forward network trained by per-example backpropagation, in the style of the
classic textbook code: layer sizes in a list, weights and biases as lists of column-vector
arrays on the network, a cost class whose static methods are called through the attribute
holding the class, a mini-batch given as a list of (x, y) tuples, gradients summed by
rebuilding lists with comprehensions over `zip`, negative list indices walking the layers
backwards, list items assigned (`grads_b[-1] = delta`), and accuracy counted with
`sum(int(a == b) for ...)`."""

import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def sigmoid_prime(z):
    s = sigmoid(z)
    return s * (1 - s)


def one_hot(j, n=10):
    e = np.zeros((n, 1))
    e[j] = 1.0
    return e


class QuadraticCost:
    @staticmethod
    def value(a, y):
        return 0.5 * np.linalg.norm(a - y) ** 2

    @staticmethod
    def delta(z, a, y):
        return (a - y) * sigmoid_prime(z)


class CrossEntropyCost:
    @staticmethod
    def value(a, y):
        return np.sum(np.nan_to_num(-y * np.log(a) - (1 - y) * np.log(1 - a)))

    @staticmethod
    def delta(z, a, y):
        return a - y


class Network:
    def __init__(self, sizes, cost=CrossEntropyCost, seed=0):
        rng = np.random.default_rng(seed)
        self.num_layers = len(sizes)
        self.sizes = sizes
        self.biases = [rng.standard_normal((n, 1)) for n in sizes[1:]]
        self.weights = [rng.standard_normal((n, m)) / np.sqrt(m) for m, n in zip(sizes[:-1], sizes[1:])]
        self.cost = cost

    def feedforward(self, a):
        for b, w in zip(self.biases, self.weights):
            a = sigmoid(np.dot(w, a) + b)
        return a

    def backprop(self, x, y):
        grads_b = [np.zeros(b.shape) for b in self.biases]
        grads_w = [np.zeros(w.shape) for w in self.weights]
        activation = x
        activations = [x]
        zs = []
        for b, w in zip(self.biases, self.weights):
            z = np.dot(w, activation) + b
            zs.append(z)
            activation = sigmoid(z)
            activations.append(activation)
        delta = (self.cost).delta(zs[-1], activations[-1], y)
        grads_b[-1] = delta
        grads_w[-1] = np.dot(delta, activations[-2].transpose())
        for layer in range(2, self.num_layers):
            z = zs[-layer]
            delta = np.dot(self.weights[-layer + 1].transpose(), delta) * sigmoid_prime(z)
            grads_b[-layer] = delta
            grads_w[-layer] = np.dot(delta, activations[-layer - 1].transpose())
        return (grads_b, grads_w)

    def update_mini_batch(self, mini_batch, eta, lmbda, n):
        grads_b = [np.zeros(b.shape) for b in self.biases]
        grads_w = [np.zeros(w.shape) for w in self.weights]
        for x, y in mini_batch:
            delta_b, delta_w = self.backprop(x, y)
            grads_b = [gb + db for gb, db in zip(grads_b, delta_b)]
            grads_w = [gw + dw for gw, dw in zip(grads_w, delta_w)]
        self.weights = [(1 - eta * (lmbda / n)) * w - (eta / len(mini_batch)) * gw
                        for w, gw in zip(self.weights, grads_w)]
        self.biases = [b - (eta / len(mini_batch)) * gb for b, gb in zip(self.biases, grads_b)]

    def accuracy(self, data):
        results = [(np.argmax(self.feedforward(x)), y) for (x, y) in data]
        return sum(int(a == b) for (a, b) in results)

    def total_cost(self, data, lmbda):
        cost = 0.0
        for x, y in data:
            a = self.feedforward(x)
            cost += self.cost.value(a, one_hot(y, len(a))) / len(data)
        cost += 0.5 * (lmbda / len(data)) * sum(np.linalg.norm(w) ** 2 for w in self.weights)
        return cost
