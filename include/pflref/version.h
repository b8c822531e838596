/* pflref/version.h: the library version. */
#ifndef PFLREF_VERSION_H
#define PFLREF_VERSION_H

#define PFLREF_VERSION "0.1.0"

#endif
