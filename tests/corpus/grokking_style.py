"""A network the way "Grokking Deep Learning" writes one: weights as module globals updated with
`global` and `+=`, one sample at a time through a Python loop over the dataset (`images[i:i+1]`),
dropout masks from `np.random.randint` inside the loop, `correct_cnt += int(np.argmax(..) == ..)`,
progress written with `sys.stdout.write(" I:" + ... + str(error)[0:5])`, minibatches by computed
slice bounds, and the embedding chapter's `weights_e_1[x] -= ...` on a list of word ids."""

import sys

import numpy as np

np.random.seed(1)


def relu(x):
    return (x >= 0) * x


def relu2deriv(output):
    return output >= 0


def tanh(x):
    return np.tanh(x)


def tanh2deriv(output):
    return 1 - (output ** 2)


def softmax(x):
    temp = np.exp(x)
    return temp / np.sum(temp, axis=1, keepdims=True)


alpha, hidden_size, pixels_per_image, num_labels = 0.005, 40, 16, 4
weights_0_1 = 0.2 * np.random.random((pixels_per_image, hidden_size)) - 0.1
weights_1_2 = 0.2 * np.random.random((hidden_size, num_labels)) - 0.1


def train_epoch(images, labels, j):
    global weights_0_1, weights_1_2
    error, correct_cnt = (0.0, 0)
    for i in range(len(images)):
        layer_0 = images[i:i + 1]
        layer_1 = relu(np.dot(layer_0, weights_0_1))
        dropout_mask = np.random.randint(2, size=layer_1.shape)
        layer_1 *= dropout_mask * 2
        layer_2 = np.dot(layer_1, weights_1_2)
        error += np.sum((labels[i:i + 1] - layer_2) ** 2)
        correct_cnt += int(np.argmax(layer_2) == np.argmax(labels[i:i + 1]))
        layer_2_delta = (labels[i:i + 1] - layer_2)
        layer_1_delta = layer_2_delta.dot(weights_1_2.T) * relu2deriv(layer_1)
        layer_1_delta *= dropout_mask
        weights_1_2 += alpha * layer_1.T.dot(layer_2_delta)
        weights_0_1 += alpha * layer_0.T.dot(layer_1_delta)
    sys.stdout.write("\r" + " I:" + str(j) + " Error:" + str(error / float(len(images)))[0:5] +
                     " Correct:" + str(correct_cnt / float(len(images))))
    return error, correct_cnt


def train_batch_epoch(images, labels, j, batch_size=8):
    global weights_0_1, weights_1_2
    error, correct_cnt = (0.0, 0)
    for i in range(int(len(images) / batch_size)):
        batch_start, batch_end = ((i * batch_size), ((i + 1) * batch_size))
        layer_0 = images[batch_start:batch_end]
        layer_1 = tanh(np.dot(layer_0, weights_0_1))
        dropout_mask = np.random.randint(2, size=layer_1.shape)
        layer_1 *= dropout_mask * 2
        layer_2 = softmax(np.dot(layer_1, weights_1_2))
        for k in range(batch_size):
            correct_cnt += int(np.argmax(layer_2[k:k + 1]) == np.argmax(labels[batch_start + k:batch_start + k + 1]))
        layer_2_delta = (labels[batch_start:batch_end] - layer_2) / (batch_size * layer_2.shape[0])
        layer_1_delta = layer_2_delta.dot(weights_1_2.T) * tanh2deriv(layer_1)
        layer_1_delta *= dropout_mask
        weights_1_2 += alpha * layer_1.T.dot(layer_2_delta)
        weights_0_1 += alpha * layer_0.T.dot(layer_1_delta)
    if j % 10 == 0:
        print("\n" + "I:" + str(j) + " Train-Acc:" + str(correct_cnt / float(len(images))))
    return correct_cnt


def test_accuracy(test_images, test_labels):
    test_correct_cnt = 0
    for i in range(len(test_images)):
        layer_0 = test_images[i:i + 1]
        layer_1 = relu(np.dot(layer_0, weights_0_1))
        layer_2 = np.dot(layer_1, weights_1_2)
        test_correct_cnt += int(np.argmax(layer_2) == np.argmax(test_labels[i:i + 1]))
    return test_correct_cnt


# Chapter 11-style word embeddings: sentiment with sums of embedding rows
vocab_size, embed = 30, 8
weights_e_1 = 0.2 * np.random.random((vocab_size, embed)) - 0.1
weights_e_2 = 0.2 * np.random.random((embed, 1)) - 0.1


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def sentiment_step(x, y):
    global weights_e_1, weights_e_2
    layer_1 = sigmoid(np.sum(weights_e_1[x], axis=0))
    layer_2 = sigmoid(np.dot(layer_1, weights_e_2))
    layer_2_delta = layer_2 - y
    layer_1_delta = layer_2_delta.dot(weights_e_2.T)
    weights_e_1[x] -= layer_1_delta * alpha
    weights_e_2 -= np.outer(layer_1, layer_2_delta) * alpha
    if np.abs(layer_2_delta) < 0.5:
        return 1
    return 0
