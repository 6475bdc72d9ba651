# A global set in main(): fork copies it into the workers, spawn and forkserver workers lack it.
import multiprocessing as mp

CONFIG = {}


def work(x):
    return x * CONFIG["scale"]


def main():
    CONFIG["scale"] = 3
    with mp.Pool(2) as pool:
        print(pool.map(work, range(4)))


if __name__ == "__main__":
    main()
