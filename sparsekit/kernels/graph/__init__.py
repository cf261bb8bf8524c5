"""Graph kernels: kernels on sequences of graphs (``accepts = "graphs"``)."""

from .feature_map import ShortestPathFeatures
from .input import GraphBatch, parse_graphs
from .shortest_path import ShortestPathKernel

__all__ = ["ShortestPathKernel", "ShortestPathFeatures", "GraphBatch", "parse_graphs"]
