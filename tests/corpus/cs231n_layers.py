"""CS231n assignments 2 and 3, the way the course writes them: convolution and max-pooling as
four nested loops over samples, filters and output positions (`out[n, f, i, j] = np.sum(window *
w[f]) + b[f]`, `dx[n, c, i * s + idx[0], j * s + idx[1]] += ...` with `np.unravel_index`), layers
returning `(out, cache)` tuples, and the captioning RNN: `h[:, t, :] = prev_h` in a time loop, a
list of step caches, `W[x]` embeddings with `np.add.at` gradients, a temporal softmax loss with
`probs[np.arange(N * T), y_flat]` and a mask, and a solver whose Adam keeps its state in per-parameter
config dicts filled with `setdefault`."""
import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param['stride'], conv_param['pad']
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode='constant')
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    window = x_pad[n, :, i * stride:i * stride + HH, j * stride:j * stride + WW]
                    out[n, f, i, j] = np.sum(window * w[f]) + b[f]
    cache = (x, w, b, conv_param)
    return out, cache


def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    stride, pad = conv_param['stride'], conv_param['pad']
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    _, _, H_out, W_out = dout.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode='constant')
    dx_pad = np.zeros_like(x_pad)
    dw = np.zeros_like(w)
    db = np.sum(dout, axis=(0, 2, 3))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    hs, ws = i * stride, j * stride
                    dw[f] += x_pad[n, :, hs:hs + HH, ws:ws + WW] * dout[n, f, i, j]
                    dx_pad[n, :, hs:hs + HH, ws:ws + WW] += w[f] * dout[n, f, i, j]
    dx = dx_pad[:, :, pad:pad + H, pad:pad + W]
    return dx, dw, db


def max_pool_forward_naive(x, pool_param):
    N, C, H, W = x.shape
    ph, pw, s = pool_param['pool_height'], pool_param['pool_width'], pool_param['stride']
    H_out = 1 + (H - ph) // s
    W_out = 1 + (W - pw) // s
    out = np.zeros((N, C, H_out, W_out))
    for i in range(H_out):
        for j in range(W_out):
            out[:, :, i, j] = np.max(x[:, :, i * s:i * s + ph, j * s:j * s + pw], axis=(2, 3))
    cache = (x, pool_param)
    return out, cache


def max_pool_backward_naive(dout, cache):
    x, pool_param = cache
    N, C, H, W = x.shape
    ph, pw, s = pool_param['pool_height'], pool_param['pool_width'], pool_param['stride']
    _, _, H_out, W_out = dout.shape
    dx = np.zeros_like(x)
    for n in range(N):
        for c in range(C):
            for i in range(H_out):
                for j in range(W_out):
                    window = x[n, c, i * s:i * s + ph, j * s:j * s + pw]
                    idx = np.unravel_index(np.argmax(window), window.shape)
                    dx[n, c, i * s + idx[0], j * s + idx[1]] += dout[n, c, i, j]
    return dx


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def rnn_step_backward(dnext_h, cache):
    x, prev_h, Wx, Wh, next_h = cache
    dtanh = dnext_h * (1 - next_h ** 2)
    dx = dtanh.dot(Wx.T)
    dprev_h = dtanh.dot(Wh.T)
    dWx = x.T.dot(dtanh)
    dWh = prev_h.T.dot(dtanh)
    db = dtanh.sum(axis=0)
    return dx, dprev_h, dWx, dWh, db


def rnn_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    cache = []
    prev_h = h0
    for t in range(T):
        prev_h, step_cache = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        h[:, t, :] = prev_h
        cache.append(step_cache)
    return h, cache


def rnn_backward(dh, cache):
    N, T, H = dh.shape
    D = cache[0][0].shape[1]
    dx = np.zeros((N, T, D))
    dh0 = np.zeros((N, H))
    dWx = np.zeros((D, H))
    dWh = np.zeros((H, H))
    db = np.zeros(H)
    dprev = np.zeros((N, H))
    for t in reversed(range(T)):
        dx_t, dprev, dWx_t, dWh_t, db_t = rnn_step_backward(dh[:, t, :] + dprev, cache[t])
        dx[:, t, :] = dx_t
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    dh0 = dprev
    return dx, dh0, dWx, dWh, db


def word_embedding_forward(x, W):
    out = W[x]
    cache = (x, W)
    return out, cache


def word_embedding_backward(dout, cache):
    x, W = cache
    dW = np.zeros_like(W)
    np.add.at(dW, x, dout)
    return dW


def temporal_affine_forward(x, w, b):
    N, T, D = x.shape
    M = b.shape[0]
    out = x.reshape(N * T, D).dot(w).reshape(N, T, M) + b
    cache = x, w, b, out
    return out, cache


def temporal_affine_backward(dout, cache):
    x, w, b, out = cache
    N, T, D = x.shape
    M = b.shape[0]
    dx = dout.reshape(N * T, M).dot(w.T).reshape(N, T, D)
    dw = dout.reshape(N * T, M).T.dot(x.reshape(N * T, D)).T
    db = dout.sum(axis=(0, 1))
    return dx, dw, db


def temporal_softmax_loss(x, y, mask, verbose=False):
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]
    if verbose:
        print('dx_flat: ', dx_flat.shape)
    dx = dx_flat.reshape(N, T, V)
    return loss, dx


class CaptioningRNN:
    def __init__(self, word_to_idx, input_dim=6, wordvec_dim=5, hidden_dim=7, dtype=np.float64):
        self.word_to_idx = word_to_idx
        self.idx_to_word = {i: w for w, i in word_to_idx.items()}
        self._null = word_to_idx['<NULL>']
        self._start = word_to_idx.get('<START>', None)
        self._end = word_to_idx.get('<END>', None)
        V = len(word_to_idx)
        self.params = {}
        rng = np.random.RandomState(0)
        self.params['W_embed'] = rng.randn(V, wordvec_dim) / 100
        self.params['W_proj'] = rng.randn(input_dim, hidden_dim) / np.sqrt(input_dim)
        self.params['b_proj'] = np.zeros(hidden_dim)
        self.params['Wx'] = rng.randn(wordvec_dim, hidden_dim) / np.sqrt(wordvec_dim)
        self.params['Wh'] = rng.randn(hidden_dim, hidden_dim) / np.sqrt(hidden_dim)
        self.params['b'] = np.zeros(hidden_dim)
        self.params['W_vocab'] = rng.randn(hidden_dim, V) / np.sqrt(hidden_dim)
        self.params['b_vocab'] = np.zeros(V)
        for k, v in self.params.items():
            self.params[k] = v.astype(dtype)

    def loss(self, features, captions):
        captions_in = captions[:, :-1]
        captions_out = captions[:, 1:]
        mask = (captions_out != self._null)
        W_proj, b_proj = self.params['W_proj'], self.params['b_proj']
        W_embed = self.params['W_embed']
        Wx, Wh, b = self.params['Wx'], self.params['Wh'], self.params['b']
        W_vocab, b_vocab = self.params['W_vocab'], self.params['b_vocab']
        loss, grads = 0.0, {}
        h0 = features.dot(W_proj) + b_proj
        x, cache_embed = word_embedding_forward(captions_in, W_embed)
        h, cache_rnn = rnn_forward(x, h0, Wx, Wh, b)
        scores, cache_scores = temporal_affine_forward(h, W_vocab, b_vocab)
        loss, dscores = temporal_softmax_loss(scores, captions_out, mask)
        dh, grads['W_vocab'], grads['b_vocab'] = temporal_affine_backward(dscores, cache_scores)
        dx, dh0, grads['Wx'], grads['Wh'], grads['b'] = rnn_backward(dh, cache_rnn)
        grads['W_embed'] = word_embedding_backward(dx, cache_embed)
        grads['W_proj'] = features.T.dot(dh0)
        grads['b_proj'] = dh0.sum(axis=0)
        return loss, grads

    def sample(self, features, max_length=6):
        N = features.shape[0]
        captions = self._null * np.ones((N, max_length), dtype=np.int32)
        W_proj, b_proj = self.params['W_proj'], self.params['b_proj']
        W_embed = self.params['W_embed']
        Wx, Wh, b = self.params['Wx'], self.params['Wh'], self.params['b']
        W_vocab, b_vocab = self.params['W_vocab'], self.params['b_vocab']
        h = features.dot(W_proj) + b_proj
        word = self._start * np.ones(N, dtype=np.int32)
        for t in range(max_length):
            x = W_embed[word]
            h, _ = rnn_step_forward(x, h, Wx, Wh, b)
            scores = h.dot(W_vocab) + b_vocab
            word = np.argmax(scores, axis=1)
            captions[:, t] = word
        return captions


def adam(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault('learning_rate', 1e-3)
    config.setdefault('beta1', 0.9)
    config.setdefault('beta2', 0.999)
    config.setdefault('epsilon', 1e-8)
    config.setdefault('m', np.zeros_like(w))
    config.setdefault('v', np.zeros_like(w))
    config.setdefault('t', 0)
    config['t'] += 1
    config['m'] = config['beta1'] * config['m'] + (1 - config['beta1']) * dw
    mt = config['m'] / (1 - config['beta1'] ** config['t'])
    config['v'] = config['beta2'] * config['v'] + (1 - config['beta2']) * (dw ** 2)
    vt = config['v'] / (1 - config['beta2'] ** config['t'])
    next_w = w - config['learning_rate'] * mt / (np.sqrt(vt) + config['epsilon'])
    return next_w, config


def solver_step(model, optim_configs, features, captions):
    loss, grads = model.loss(features, captions)
    for p, w in model.params.items():
        dw = grads[p]
        config = optim_configs[p]
        next_w, next_config = adam(w, dw, config)
        model.params[p] = next_w
        optim_configs[p] = next_config
    return loss
