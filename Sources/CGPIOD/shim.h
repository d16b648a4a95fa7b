#ifndef STAGEBOX_CGPIOD_SHIM_H
#define STAGEBOX_CGPIOD_SHIM_H
#include <gpiod.h>
#endif
