"""Settings for the whole test suite.

The tests assert which calls ran compiled code, so each call that needs a new
variant waits for its compile (`wait_for_compile="always"`) instead of running
in the interpreter while it compiles in the background (the default), and
compiled code is not timed against the interpreter (`keep_faster`, on by
default): which calls ran compiled then does not depend on the machine's speed
or load. tests/test_compile_thread.py and tests/test_speed_trial.py test the
defaults. Subprocesses inherit them.
"""

import os

os.environ.setdefault("PYFRONT_WAIT_FOR_COMPILE", "always")
os.environ.setdefault("PYFRONT_KEEP_FASTER", "0")
