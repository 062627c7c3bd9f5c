"""Settings for the whole test suite.

The tests assert which calls ran compiled code, so each call that needs a new
variant waits for its compile (`wait_for_compile="always"`) instead of running
in the interpreter while it compiles in the background (the default): which
calls ran compiled then does not depend on the machine's speed.
tests/test_compile_thread.py tests the default. Subprocesses inherit it.
"""

import os

os.environ.setdefault("PYFRONT_WAIT_FOR_COMPILE", "always")
