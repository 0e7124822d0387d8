/*
 * acl_module.c - pyACL-style functions for evrt.acl.rt (placeholder: filled
 * once the torch-style part is complete).
 */
#include "evrt_module.h"

int evrtpy_acl_init(PyObject *module) { return 0; }
