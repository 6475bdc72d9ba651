# Helper module, not a program: imported by executor_at_import.py (executor_at_import_mod.py)
# or by executor_at_import_fixed.py (executor_at_import_fixed_mod.py); see there.
from concurrent.futures import ProcessPoolExecutor


def square(x):
    return x * x


def run():
    with ProcessPoolExecutor(max_workers=1) as ex:
        return ex.submit(square, 7).result()
