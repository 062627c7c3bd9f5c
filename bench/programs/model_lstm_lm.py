"""The model suite's RNN (examples/models/lstm_lm.py): one Adam training step of the LSTM language model.

The model's own `train_step` on a batch of sentences of one length from its
grammar: a Python loop over the time steps (unrolled by every compiler here),
`pyfront.value_and_grad`, Adam written into the model's and the optimizer's
dicts; the benchmarked function also returns the arrays it wrote.
"""

import numpy as np

from bench.program import Port, Program
from bench.programs._model_suite import NUMBA, jax_inputs, jax_train_step, optimizer_state
from examples.models import lstm_lm
from examples.models.optim import Adam

LENGTH = 8  # tokens per sentence (the grammar makes 7 to 9)


def make_optimizer(params):
    return Adam(params, lr=0.01)  # as lstm_lm.trainer


def train_step(model, opt, tokens):
    loss = lstm_lm.train_step(model, opt, tokens)
    return loss, model.param_list(), optimizer_state(opt, model.names)


def make_inputs(size, rng):
    model, _ = lstm_lm.make(0)
    rows = []
    while len(rows) < size["batch"]:
        words = lstm_lm.sentence(rng)
        if len(words) == size["length"]:
            rows.append([lstm_lm.WORD_ID[w] for w in words])
    return model, make_optimizer(model.params), np.array(rows, np.int64)


PROGRAM = Program(
    name="model_lstm_lm",
    description="model suite LSTM language model: training step over 8-token sentences (value_and_grad; Adam), float32",
    fn=train_step,
    make_inputs=make_inputs,
    sizes={"B16 T8 16-32": {"batch": 16, "length": LENGTH}},
    ports={"numba": NUMBA, "jax": Port(jax_train_step(lstm_lm.loss_fn, make_optimizer),
                       lambda inputs: (*jax_inputs(*inputs[:2]), *inputs[2:]))},
    stateful=True,
    rtol=1e-3,
    atol=1e-5,
)
