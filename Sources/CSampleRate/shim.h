#ifndef STAGEBOX_CSAMPLERATE_SHIM_H
#define STAGEBOX_CSAMPLERATE_SHIM_H
#include <samplerate.h>
#endif
