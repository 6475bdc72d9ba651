# Names its own start method: the matrix's method applies elsewhere, --force-start-method here too.
import multiprocessing as mp


def square(x):
    return x * x


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:  # <own>
        print(pool.map(square, range(4)))
