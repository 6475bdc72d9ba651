# Source: Python docs, multiprocessing programming guidelines for spawn and forkserver, "More
#   picklability: ensure that all arguments to Process.__init__() are picklable":
#   https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods
# Shape: a worker function defined inside main() is the target of a Process started with spawn;
# start() pickles the target, and pickle finds functions by their module-level name only.
# Run: p.start() raises "AttributeError: Can't pickle local object 'main.<locals>.work'" (3.6:
# "Can't pickle local object"; 3.13: "Can't get local object") and the program exits 1.
import multiprocessing as mp


def main():
    scale = 3

    def work(x):
        print(x * scale)

    p = mp.get_context("spawn").Process(target=work, args=(7,))
    p.start()
    p.join()


if __name__ == "__main__":
    main()
