import os

os.environ.setdefault("KERAS_BACKEND", "jax")
