/* libglobal.c: a global variable in a static library of the program's own (libprivglobal.a),
 * for privatize.c: each rank must see its own copy of lib_global too. */
int lib_global = 0;

int lib_bump(void) { return ++lib_global; }

int* lib_address(void) { return &lib_global; }
