"""The model suite's CNN (examples/models/cnn.py): one SGD-with-momentum training step of LeNet on 8x8 digits.

The step is the model's own `train_step` (conv/pool/dense forward, softmax
cross-entropy, `pyfront.value_and_grad`, momentum update written into the
model's and the optimizer's dicts) on a batch of load_digits images; the
benchmarked function also returns the arrays it wrote (bench/programs/_model_suite.py).
"""


from bench.program import Port, Program
from bench.programs._model_suite import NUMBA, jax_inputs, jax_train_step, optimizer_state
from examples.models import cnn
from examples.models.optim import SGD


def make_optimizer(params):
    return SGD(params, lr=0.05, momentum=0.9)  # as cnn.trainer


def train_step(model, opt, images, labels):
    loss = cnn.train_step(model, opt, images, labels)
    return loss, model.param_list(), optimizer_state(opt, model.names)


def make_inputs(size, rng):
    model, data = cnn.make(0)
    images, labels = data["train"]
    idx = rng.permutation(len(images))[: size["batch"]]
    return model, make_optimizer(model.params), images[idx], labels[idx]


PROGRAM = Program(
    name="model_cnn",
    description="model suite CNN: LeNet training step (conv, pools, dense; value_and_grad; SGD momentum), float32",
    fn=train_step,
    make_inputs=make_inputs,
    sizes={"B64 8x8": {"batch": 64}},
    ports={
        "numba": NUMBA,
        "jax": Port(jax_train_step(cnn.loss_fn, make_optimizer),
                    lambda inputs: (*jax_inputs(*inputs[:2]), *inputs[2:])),
    },
    stateful=True,
    rtol=1e-3,
    atol=1e-5,
)
