"""A character-level LSTM language model written as a script, in the style of the minimal NumPy
LSTMs derived from the min-char-rnn gist: module-level weights, gates computed from the stacked
[h_prev; x] column, per-step caches in dicts keyed by t, a backward pass accumulating
`dW_f += np.dot(...)` with dh_next/dC_next, clipping with out=, and Adagrad over zipped lists of
parameters, gradients and memories. The stacking is np.row_stack, as those scripts wrote it
before NumPy 2 deprecated the alias (it now warns on every call)."""

import numpy as np

data = "the quick brown fox jumps over the lazy dog. a lazy dog sleeps. " * 3
chars = sorted(set(data))
vocab_size = len(chars)
char_to_idx = {ch: i for i, ch in enumerate(chars)}
idx_to_char = {i: ch for i, ch in enumerate(chars)}

H_size = 10
z_size = H_size + vocab_size
T_steps = 6
learning_rate = 1e-1
weight_sd = 0.1

rng = np.random.default_rng(13)
W_f = rng.standard_normal((H_size, z_size)) * weight_sd + 0.5
b_f = np.zeros((H_size, 1))
W_i = rng.standard_normal((H_size, z_size)) * weight_sd + 0.5
b_i = np.zeros((H_size, 1))
W_C = rng.standard_normal((H_size, z_size)) * weight_sd
b_C = np.zeros((H_size, 1))
W_o = rng.standard_normal((H_size, z_size)) * weight_sd + 0.5
b_o = np.zeros((H_size, 1))
W_v = rng.standard_normal((vocab_size, H_size)) * weight_sd
b_v = np.zeros((vocab_size, 1))

mW_f, mW_i, mW_C, mW_o, mW_v = (np.zeros_like(W) for W in (W_f, W_i, W_C, W_o, W_v))
mb_f, mb_i, mb_C, mb_o, mb_v = (np.zeros_like(b) for b in (b_f, b_i, b_C, b_o, b_v))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def dsigmoid(y):
    return y * (1 - y)


def tanh(x):
    return np.tanh(x)


def dtanh(y):
    return 1 - y * y


def forward(x, h_prev, C_prev):
    z = np.row_stack((h_prev, x))
    f = sigmoid(np.dot(W_f, z) + b_f)
    i = sigmoid(np.dot(W_i, z) + b_i)
    C_bar = tanh(np.dot(W_C, z) + b_C)
    C = f * C_prev + i * C_bar
    o = sigmoid(np.dot(W_o, z) + b_o)
    h = o * tanh(C)
    v = np.dot(W_v, h) + b_v
    y = np.exp(v) / np.sum(np.exp(v))
    return z, f, i, C_bar, C, o, h, v, y


def lossFun(inputs, targets, h_prev, C_prev):
    x_s, z_s, f_s, i_s, C_bar_s, C_s, o_s, h_s, v_s, y_s = {}, {}, {}, {}, {}, {}, {}, {}, {}, {}
    h_s[-1] = np.copy(h_prev)
    C_s[-1] = np.copy(C_prev)
    loss = 0
    for t in range(len(inputs)):
        x_s[t] = np.zeros((vocab_size, 1))
        x_s[t][inputs[t]] = 1
        (z_s[t], f_s[t], i_s[t], C_bar_s[t], C_s[t], o_s[t], h_s[t], v_s[t], y_s[t]) = \
            forward(x_s[t], h_s[t - 1], C_s[t - 1])
        loss += -np.log(y_s[t][targets[t], 0])

    dW_f, dW_i, dW_C = np.zeros_like(W_f), np.zeros_like(W_i), np.zeros_like(W_C)
    dW_o, dW_v = np.zeros_like(W_o), np.zeros_like(W_v)
    db_f, db_i, db_C = np.zeros_like(b_f), np.zeros_like(b_i), np.zeros_like(b_C)
    db_o, db_v = np.zeros_like(b_o), np.zeros_like(b_v)
    dh_next = np.zeros_like(h_s[0])
    dC_next = np.zeros_like(C_s[0])
    for t in reversed(range(len(inputs))):
        dv = np.copy(y_s[t])
        dv[targets[t]] -= 1
        dW_v += np.dot(dv, h_s[t].T)
        db_v += dv

        dh = np.dot(W_v.T, dv) + dh_next
        do = dh * tanh(C_s[t])
        do = dsigmoid(o_s[t]) * do
        dW_o += np.dot(do, z_s[t].T)
        db_o += do

        dC = np.copy(dC_next)
        dC += dh * o_s[t] * dtanh(tanh(C_s[t]))
        dC_bar = dC * i_s[t]
        dC_bar = dtanh(C_bar_s[t]) * dC_bar
        dW_C += np.dot(dC_bar, z_s[t].T)
        db_C += dC_bar

        di = dC * C_bar_s[t]
        di = dsigmoid(i_s[t]) * di
        dW_i += np.dot(di, z_s[t].T)
        db_i += di

        df = dC * C_s[t - 1]
        df = dsigmoid(f_s[t]) * df
        dW_f += np.dot(df, z_s[t].T)
        db_f += df

        dz = np.dot(W_f.T, df) + np.dot(W_i.T, di) + np.dot(W_C.T, dC_bar) + np.dot(W_o.T, do)
        dh_next = dz[:H_size, :]
        dC_next = f_s[t] * dC

    grads = [dW_f, dW_i, dW_C, dW_o, dW_v, db_f, db_i, db_C, db_o, db_v]
    for dparam in grads:
        np.clip(dparam, -5, 5, out=dparam)
    return loss, grads, h_s[len(inputs) - 1], C_s[len(inputs) - 1]


def train_step(inputs, targets, h_prev, C_prev):
    loss, grads, h_prev, C_prev = lossFun(inputs, targets, h_prev, C_prev)
    for param, dparam, mem in zip([W_f, W_i, W_C, W_o, W_v, b_f, b_i, b_C, b_o, b_v],
                                  grads,
                                  [mW_f, mW_i, mW_C, mW_o, mW_v, mb_f, mb_i, mb_C, mb_o, mb_v]):
        mem += dparam * dparam
        param += -learning_rate * dparam / np.sqrt(mem + 1e-8)
    return loss, h_prev, C_prev
