"""What the seed scripts of this folder share: writing their seeds, one file each."""
import os


def write_seeds(out, seeds):
    """Writes each seed of `seeds` (file name -> bytes) into the folder `out` (made when missing)
    and prints its name and size."""
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print("%s: %d bytes" % (name, len(data)))
