"""Feature maps: Nystroem, random Fourier features, Fastfood."""

__all__: list[str] = []  # a namespace of modules: each submodule lists its names
