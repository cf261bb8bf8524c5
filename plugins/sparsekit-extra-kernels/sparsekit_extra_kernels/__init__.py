"""Extra kernels for sparsekit (cosine similarity, sigmoid), provided as a plugin."""

from .kernels import CosineKernel, SigmoidKernel

__all__ = ["CosineKernel", "SigmoidKernel"]
