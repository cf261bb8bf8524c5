"""Feature maps: Nystroem, random Fourier features, Fastfood."""
