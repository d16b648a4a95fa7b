#ifndef STAGEBOX_CSNDFILE_SHIM_H
#define STAGEBOX_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
