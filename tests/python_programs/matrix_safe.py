# Safe under every start method: a module-level function, the __main__ guard.
import multiprocessing as mp


def square(x):
    return x * x


if __name__ == "__main__":
    with mp.Pool(2) as pool:
        print(pool.map(square, range(4)))
