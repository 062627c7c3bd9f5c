"""The model suite's TreeNN (examples/models/treenn.py): one Adam training step of the TreeRNN on one tree.

The model's own `train_step`: recursion over the tree, `pyfront.value_and_grad`,
Adam written into the dicts; the benchmarked function also returns the arrays
it wrote. The tree goes to jax.jit as it is (nested tuples, or the model's
tree objects registered as pytrees); jit retraces per topology. The size's
"batch" is the tree's number of leaves (one tree per step): the shape-change
measure is a tree with one leaf more, i.e. a new topology (pyfront and
jax.jit specialize on it).
"""

import functools

import numpy as np

from bench.program import Port, Program
from bench.programs._model_suite import NUMBA, jax_inputs, jax_train_step, optimizer_state
from examples.models import treenn
from examples.models.optim import Adam


def make_optimizer(params):
    return Adam(params, lr=0.01)  # as treenn.trainer


def train_step(model, opt, tree, label):
    loss = treenn.train_step(model, opt, tree, label)
    return loss, model.param_list(), optimizer_state(opt, model.names)


def make_inputs(size, rng):
    model, _ = treenn.make(0)
    tree = treenn.random_tree(rng, size["batch"])
    label = np.array([int(treenn.POLARITY[treenn.words_of(tree)].sum() > 0)], np.int64)
    return model, make_optimizer(model.params), tree, label


def jax_arguments(inputs):
    """The port's arguments: the arrays out of the objects; the tree as it is (a pytree for jax)."""
    register_tree_classes()
    model, opt, tree, label = inputs
    return (*jax_inputs(model, opt), tree, label)


@functools.cache
def register_tree_classes():
    """Make the model's tree classes pytrees, if its trees are objects (nested tuples already are)."""
    import jax

    for name, fields in (("Leaf", ("word",)), ("Node", ("left", "right"))):
        cls = getattr(treenn, name, None)
        if cls is not None:
            jax.tree_util.register_pytree_node(
                cls, lambda tree, fields=fields: ([getattr(tree, f) for f in fields], None),
                lambda _, children, cls=cls: cls(*children))


PROGRAM = Program(
    name="model_treenn",
    description="model suite TreeRNN: training step on one 4-leaf tree (recursion; value_and_grad; Adam), float32",
    fn=train_step,
    make_inputs=make_inputs,
    sizes={"4 leaves": {"batch": 4}},
    ports={"numba": NUMBA, "jax": Port(jax_train_step(treenn.loss_fn, make_optimizer), jax_arguments)},
    stateful=True,
    rtol=1e-3,
    atol=1e-5,
)
