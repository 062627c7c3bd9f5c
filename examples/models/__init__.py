"""The model suite: one small training program per category of the JANUS evaluation.

Each module is a plain NumPy program a user could have written, with the same
interface:

    make(seed)                                            -> (model, data)
    trainer(seed=0, compile=True, backend="cpu")          -> Training (common.py)
    train(steps, compile=True, seed=0, backend="cpu")     -> trainer(...).run(steps)
    evaluate(model, data)                                 -> the model's metric (accuracy, loss, ...)

`train` builds its training step (loss, `pyfront.value_and_grad`, optimizer
update written in plain NumPy on parameters held in an object's dict) and,
with `compile=True`, wraps it in `pyfront.compile(step, backend=backend)`;
`Training.step` is that function, so `pyfront.explain(run.step)` shows
what ran compiled. Run a model with `python -m examples.models.<name>` from
the repository root.

    cnn        LeNet-style convolutional network on scikit-learn's 8x8 digits
    lstm_lm    LSTM word-level language model on sentences from a small grammar
    treenn     TreeRNN over random binary trees (recursion over nested tuples)
    reinforce  REINFORCE on cart-pole dynamics written in NumPy
    gan        MLP GAN on a 2-D Gaussian
"""

MODELS = ("cnn", "lstm_lm", "treenn", "reinforce", "gan")
