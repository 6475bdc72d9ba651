"""forkcheck's wheel: the portable build (ci/make-portable.sh) as pip installs it.

The folder FORKCHECK_WHEEL_STAGE is an install prefix (bin/forkcheck, libexec/forkcheck,
lib/forkcheck, share/forkcheck, share/man). Every file of it goes in as a data file, which pip
puts under the environment's prefix with its executable bit: bin/forkcheck lands in the
environment's bin/ (on PATH in an activated venv, under pipx) and finds its parts at
../libexec/forkcheck, ../lib/forkcheck and ../share/forkcheck, as in any install. (Not as a
script: setuptools reads a script's first line as text.) No
Python module: the wheel is tagged py3-none-PLATFORM, FORKCHECK_WHEEL_PLATFORM
(manylinux_2_X_ARCH, X from the newest glibc symbol its programs need: ci/make-wheel.sh).
"""

import os

from setuptools import setup
from setuptools.dist import Distribution

try:  # setuptools 70.1 and later have it; wheel's own is deprecated from wheel 0.44
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # Debian bookworm's setuptools 66, with its python3-wheel
    from wheel.bdist_wheel import bdist_wheel

STAGE = os.environ["FORKCHECK_WHEEL_STAGE"]
PLATFORM = os.environ["FORKCHECK_WHEEL_PLATFORM"]
VERSION = os.environ["FORKCHECK_WHEEL_VERSION"]


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # platform-specific: its programs are one platform's


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return "py3", "none", PLATFORM  # any Python 3: nothing in it is a Python module


def data_files():
    """(folder under the prefix, [files]) for every file of the stage."""
    found = []
    for folder, _, files in sorted(os.walk(STAGE)):
        relative = os.path.relpath(folder, STAGE)
        if not files:
            continue
        found.append((relative, [os.path.join(folder, name) for name in sorted(files)]))
    return found


setup(
    name="forkcheck",
    version=VERSION,
    description="Reproduces and diagnoses fork-safety failures of multiprocessing PyTorch "
                "programs: forkcheck exec, watch, matrix and attach for your own program",
    long_description=open(os.path.join(STAGE, "share", "doc", "forkcheck", "README.md")).read(),
    long_description_content_type="text/markdown",
    url="https://github.com/forkcheck/forkcheck",
    license="BSD-3-Clause",
    python_requires=">=3.6",
    data_files=data_files(),
    distclass=BinaryDistribution,
    cmdclass={"bdist_wheel": PlatformWheel},
    zip_safe=False,
)
