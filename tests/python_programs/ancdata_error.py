# Fails with the message torch.multiprocessing's receiving side gives when it has run out of
# descriptors (the catalog's fd-passing-exhaustion reproduces it for real).
def receive():
    raise RuntimeError("received 0 items of ancdata")  # <raise>


receive()
