"""Linear classifiers and a two-layer net the way CS231n's assignments write them: naive losses
with explicit loops (`continue` on the correct class, a branch on each margin), vectorized ones
with `scores[np.arange(N), y]`, a classifier class whose `train` draws minibatches with
`np.random.choice` and records a loss history, a k-nearest-neighbour distance matrix."""

import numpy as np


def svm_loss_naive(W, X, y, reg):
    dW = np.zeros(W.shape)
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1  # delta = 1
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    loss /= num_train
    dW /= num_train
    loss += reg * np.sum(W * W)
    dW += 2 * reg * W
    return loss, dW


def svm_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct_class_scores = scores[np.arange(num_train), y]
    margins = np.maximum(0, scores - correct_class_scores[:, np.newaxis] + 1)
    margins[np.arange(num_train), y] = 0
    loss = np.sum(margins) / num_train + reg * np.sum(W * W)
    binary = margins
    binary[margins > 0] = 1
    row_sum = np.sum(binary, axis=1)
    binary[np.arange(num_train), y] = -row_sum.T
    dW = X.T.dot(binary) / num_train + 2 * reg * W
    return loss, dW


def softmax_loss_naive(W, X, y, reg):
    loss = 0.0
    dW = np.zeros_like(W)
    num_train, num_classes = X.shape[0], W.shape[1]
    for i in range(num_train):
        f = X[i].dot(W)
        f -= np.max(f)  # numeric stability
        p = np.exp(f) / np.sum(np.exp(f))
        loss += -np.log(p[y[i]])
        for k in range(num_classes):
            dW[:, k] += (p[k] - (k == y[i])) * X[i]
    loss = loss / num_train + 0.5 * reg * np.sum(W * W)
    dW = dW / num_train + reg * W
    return loss, dW


def softmax_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    f = X.dot(W)
    f -= np.max(f, axis=1, keepdims=True)
    p = np.exp(f) / np.sum(np.exp(f), axis=1, keepdims=True)
    loss = np.sum(-np.log(p[np.arange(num_train), y])) / num_train + 0.5 * reg * np.sum(W * W)
    ind = np.zeros_like(p)
    ind[np.arange(num_train), y] = 1
    dW = X.T.dot(p - ind) / num_train + reg * W
    return loss, dW


class LinearClassifier(object):
    def __init__(self):
        self.W = None

    def train(self, X, y, learning_rate=1e-3, reg=1e-5, num_iters=100, batch_size=200, verbose=False):
        num_train, dim = X.shape
        num_classes = np.max(y) + 1
        if self.W is None:
            self.W = 0.001 * np.random.randn(dim, num_classes)
        loss_history = []
        for it in range(num_iters):
            batch = np.random.choice(num_train, batch_size, replace=True)
            loss, grad = self.loss(X[batch], y[batch], reg)
            loss_history.append(loss)
            self.W -= learning_rate * grad
            if verbose and it % 10 == 0:
                print('iteration %d / %d: loss %f' % (it, num_iters, loss))
        return loss_history

    def predict(self, X):
        return np.argmax(X.dot(self.W), axis=1)

    def loss(self, X_batch, y_batch, reg):
        raise NotImplementedError


class LinearSVM(LinearClassifier):
    def loss(self, X_batch, y_batch, reg):
        return svm_loss_vectorized(self.W, X_batch, y_batch, reg)


class Softmax(LinearClassifier):
    def loss(self, X_batch, y_batch, reg):
        return softmax_loss_vectorized(self.W, X_batch, y_batch, reg)


def compute_distances_no_loops(X, X_train):
    return np.sqrt(np.sum(X ** 2, axis=1, keepdims=True) + np.sum(X_train ** 2, axis=1)
                   - 2 * X.dot(X_train.T))


def compute_distances_one_loop(X, X_train):
    dists = np.zeros((X.shape[0], X_train.shape[0]))
    for i in range(X.shape[0]):
        dists[i, :] = np.sqrt(np.sum(np.square(X_train - X[i, :]), axis=1))
    return dists


def predict_labels(dists, y_train, k=1):
    num_test = dists.shape[0]
    y_pred = np.zeros(num_test)
    for i in range(num_test):
        closest_y = y_train[np.argsort(dists[i])[:k]]
        y_pred[i] = np.argmax(np.bincount(closest_y))  # ties: the smaller label
    return y_pred
