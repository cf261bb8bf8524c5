import os

os.environ.setdefault("KERAS_BACKEND", "jax")

import pytest  # noqa: E402


@pytest.fixture
def run_layer_test():
    """Keras' own layer-contract harness, ``keras.src.testing.TestCase.run_layer_test``:
    serialization, build, symbolic and eager calls, a training step, ``supports_masking`` and
    the ``mixed_float16`` policy (output dtype as declared, float32 weights)."""
    from keras.src.testing import TestCase

    case = TestCase()
    case.setUp()
    return case.run_layer_test
