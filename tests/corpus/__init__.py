"""Programs written the way public NumPy deep-learning code is written (textbook layer
classes, course assignments, minimal RNN scripts, RL agents, ...), each in its own module,
unmodified for pyfront. tests/test_corpus.py trains each compiled and in the interpreter
and compares every step."""
