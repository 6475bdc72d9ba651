# A trainer whose actor processes all die while it exits 0, as in the A3C trainer of the article
# "PyTorchのマルチプロセス学習でハマったところ" (the project's seed 000; no address given): each actor raises
# (there autograd's "Unable to handle autograd's threading in combination with fork-based
# multiprocessing"; here a plain RuntimeError, so that it runs without torch), the trainer joins
# them and goes on. Nothing in it looks at how they ended: under exec the run fails (exit 1).
import multiprocessing as mp


def actor(rank):
    raise RuntimeError("actor %d could not run its episode" % rank)  # <raise>


if __name__ == "__main__":
    actors = [mp.Process(target=actor, args=(i,)) for i in range(3)]
    for a in actors:
        a.start()
    for a in actors:
        a.join()
    print("episode done")
