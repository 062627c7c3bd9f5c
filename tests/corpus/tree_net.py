"""A recursive neural network over binary sentiment trees, in the style of course assignments:
`Node` objects with left/right children, an `isLeaf` flag and per-node activations stored on the
node, a recursive forward pass (`self.L[node.word]` at the leaves, tanh of W times the children's
concatenation above them), a softmax classifier at every node, backpropagation through the tree
accumulating `self.dL[node.word] += deltas`, and SGD over the model's parameter stack."""

import numpy as np

# A toy treebank: sentiment labels 0-4 on every node.
TREEBANK = ["(3 (2 the) (4 (3 good) (2 film)))", "(1 (1 (2 a) (0 dull)) (2 plot))",
            "(4 (4 (3 good) (4 fun)) (2 (2 the) (2 film)))", "(0 (1 not) (0 (1 (1 very) (3 good)) (2 plot)))",
            "(2 (2 a) (2 film))", "(3 (3 (3 (2 the) (3 fun)) (2 plot)) (2 film))"]


class Node:
    def __init__(self, label, word=None):
        self.label = label
        self.word = word
        self.parent = None
        self.left = None
        self.right = None
        self.isLeaf = False
        self.hActs = None
        self.probs = None


class Tree:
    """A tree parsed from a PTB-style string, e.g. "(3 (2 a) (4 film))"; words become vocab ids."""

    def __init__(self, treeString, vocab):
        tokens = treeString.replace("(", " ( ").replace(")", " ) ").split()
        self.root, _ = self.parse(tokens, 0, vocab)

    def parse(self, tokens, pos, vocab, parent=None):
        assert tokens[pos] == "(", "malformed tree"
        node = Node(int(tokens[pos + 1]))
        node.parent = parent
        if tokens[pos + 2] != "(":
            node.word = vocab.setdefault(tokens[pos + 2], len(vocab))
            node.isLeaf = True
            return node, pos + 4
        node.left, pos = self.parse(tokens, pos + 2, vocab, node)
        node.right, pos = self.parse(tokens, pos, vocab, node)
        return node, pos + 1


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


class RNN:
    def __init__(self, wvecDim, outputDim, numWords, rng, rho=1e-4):
        self.wvecDim = wvecDim
        self.outputDim = outputDim
        self.rho = rho
        self.L = 0.01 * rng.standard_normal((numWords, wvecDim))
        self.W = 0.01 * rng.standard_normal((wvecDim, 2 * wvecDim))
        self.b = np.zeros(wvecDim)
        self.Ws = 0.01 * rng.standard_normal((outputDim, wvecDim))
        self.bs = np.zeros(outputDim)
        self.stack = [self.L, self.W, self.b, self.Ws, self.bs]
        self.dL = np.zeros_like(self.L)
        self.dW = np.zeros_like(self.W)
        self.db = np.zeros_like(self.b)
        self.dWs = np.zeros_like(self.Ws)
        self.dbs = np.zeros_like(self.bs)

    def costAndGrad(self, mbdata):
        cost = 0.0
        for grad in (self.dL, self.dW, self.db, self.dWs, self.dbs):
            grad[:] = 0
        for tree in mbdata:
            cost += self.forwardProp(tree.root)
        for tree in mbdata:
            self.backProp(tree.root)

        scale = 1.0 / len(mbdata)
        cost = scale * cost + (self.rho / 2) * (np.sum(self.W ** 2) + np.sum(self.Ws ** 2))
        return cost, [scale * self.dL,
                      scale * self.dW + self.rho * self.W,
                      scale * self.db,
                      scale * self.dWs + self.rho * self.Ws,
                      scale * self.dbs]

    def forwardProp(self, node):
        cost = 0.0
        if node.isLeaf:
            node.hActs = self.L[node.word]
        else:
            cost += self.forwardProp(node.left)
            cost += self.forwardProp(node.right)
            node.hActs = np.tanh(self.W @ np.concatenate([node.left.hActs, node.right.hActs]) + self.b)
        node.probs = softmax(self.Ws @ node.hActs + self.bs)
        return cost - np.log(node.probs[node.label])

    def backProp(self, node, error=None):
        deltas = node.probs.copy()
        deltas[node.label] -= 1.0
        self.dWs += np.outer(deltas, node.hActs)
        self.dbs += deltas
        deltas = self.Ws.T @ deltas
        if error is not None:
            deltas += error
        if node.isLeaf:
            self.dL[node.word] += deltas
            return
        deltas *= 1 - node.hActs ** 2
        self.dW += np.outer(deltas, np.concatenate([node.left.hActs, node.right.hActs]))
        self.db += deltas
        deltas = self.W.T @ deltas
        self.backProp(node.left, deltas[:self.wvecDim])
        self.backProp(node.right, deltas[self.wvecDim:])


def train_step(rnn, mbdata, alpha):
    cost, grad = rnn.costAndGrad(mbdata)
    for P, dP in zip(rnn.stack, grad):
        P -= alpha * dP
    return cost
