"""tools/count_annotations.py: which signatures of a small module it counts, and which it calls
annotated (checked by hand against the module's source)."""

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SOURCE = textwrap.dedent("""\
    from dataclasses import dataclass
    from typing import Protocol

    __all__ = ["Base", "Child", "Record", "Proto", "typed", "untyped", "half"]


    class _Mixin:                      # a private base: its public methods count for Child
        def inherited(self, x):
            return x


    class Base:
        def __init__(self, a: int):
            self.a = a

        def __call__(self, X: list) -> list:
            return X

        def __repr__(self):            # not a public signature
            return "Base"

        def _private(self, y):         # not a public signature
            return y

        @property
        def size(self) -> int:
            return 1

        @property
        def untyped_size(self):
            return 1

        @classmethod
        def make(cls, n: int) -> "Base":
            return cls(n)

        @staticmethod
        def helper(n):
            return n


    class Child(_Mixin, Base):
        def __init__(self, a, b: int = 0):
            super().__init__(a)


    @dataclass(frozen=True)
    class Record:                      # __setattr__ and friends are generated: not counted
        n: int

        def __len__(self) -> int:
            return self.n


    class Proto(Protocol):             # typing.Protocol puts an __init__ from typing.py here
        def run(self, x: int) -> int:
            ...

        def stop(self, x):
            ...


    def typed(x: int) -> int:
        return x


    def untyped(x):
        return x


    def half(x: int):                  # no return annotation
        return x
""")

EXPECTED = {
    "Base.__init__": True,
    "Base.__call__": True,
    "Base.size": True,
    "Base.untyped_size": False,
    "Base.make": True,
    "Base.helper": False,
    "Child.__init__": False,
    "_Mixin.inherited": False,
    "Record.__init__": False,
    "Record.__len__": True,
    "Proto.run": True,
    "Proto.stop": False,
    "typed": True,
    "untyped": False,
    "half": False,
}


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location(
        "count_annotations_tool", ROOT / "tools" / "count_annotations.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture()
def fake(tmp_path):
    # the tool counts classes of modules named sparsekit...; this one is not the package
    path = tmp_path / "sparsekit_fake_annotations.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("sparsekit_fake_annotations", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(spec.name, None)


def test_counts_public_signatures_and_their_annotations(tool, fake):
    seen = tool.collect([fake])
    got = {name.removeprefix("sparsekit_fake_annotations."): ok for name, (_, ok) in seen.items()}
    # Record's generated __init__ has no source file: only __len__ is counted for it
    expected = dict(EXPECTED)
    assert "Proto.__init__" not in got  # its code is typing's, not the module's
    del expected["Record.__init__"]
    assert got == expected


def test_location_names_file_and_line(tool, fake):
    where = tool.location(fake.untyped)
    path, line = where.rsplit(":", 1)
    assert path.endswith("sparsekit_fake_annotations.py")
    assert SOURCE.splitlines()[int(line) - 1].startswith("def untyped(")


def test_main_lists_the_package_and_fails_under(tool, capsys):
    assert tool.main(["--fail-under", "0"]) == 0
    total = capsys.readouterr().out.strip().splitlines()[-1]
    done, _, rest = total.partition(" of ")
    assert int(done) <= int(rest.split()[0])
    assert tool.main(["--fail-under", "100.1"]) == 1


def test_protocol_inits_of_the_package_are_not_counted(tool):
    import sparsekit.protocols
    import sparsekit.samplers.chunked

    seen = tool.collect([sparsekit.protocols, sparsekit.samplers.chunked])
    assert not [name for name in seen if name.endswith("Protocol.__init__")]
    assert "sparsekit.samplers.chunked.ChunkedData.__init__" not in seen
    # every function counted has its code inside the repository
    for func, _ in seen.values():
        assert tool.location(func).startswith("sparsekit/")
