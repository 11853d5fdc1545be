/* access_ext.c: the other translation unit of access.c (a global and a function the loop calls
 * across units, as programs split into several files do). */
long g_count = 0;

void ext_bump(void) { ++g_count; }
