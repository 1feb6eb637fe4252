import sys

def fields(path):
    """Print the names of a PDF form's fields."""
    print("fields of", path)

if __name__ == "__main__":
    fields(sys.argv[1])
