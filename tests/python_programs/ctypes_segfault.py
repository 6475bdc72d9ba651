# Reads address 0: killed by SIGSEGV inside ctypes.
import ctypes


def read_null():
    return ctypes.string_at(0)  # <crash>


read_null()
