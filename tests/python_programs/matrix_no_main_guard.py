# No __main__ guard: each spawned worker re-runs the Pool creation and fails at start, and the
# Pool starts new ones for ever.
import multiprocessing as mp


def square(x):
    return x * x


pool = mp.Pool(2)
print(pool.map(square, range(4)))
pool.close()
pool.join()
