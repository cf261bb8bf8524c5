"""The parallel runtime."""
