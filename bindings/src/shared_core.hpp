#pragma once
// Marks a function of the shared core (libpopdist_python_core.so) that both extension modules
// call and whose signature holds a pybind11 type: pybind11's namespace is hidden, and GCC gives a
// function the narrowest visibility of its types unless the declaration says otherwise.

#define POPDIST_PYTHON_API __attribute__((visibility("default")))
