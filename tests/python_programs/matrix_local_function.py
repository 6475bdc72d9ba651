# A Pool given a function defined inside main(): it cannot be pickled, under any method.
import multiprocessing as mp


def main():
    def work(x):
        return x + 1

    with mp.Pool(2) as pool:
        print(pool.map(work, range(4)))


if __name__ == "__main__":
    main()
