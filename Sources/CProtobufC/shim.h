/* The protobuf-c runtime (Debian 12: 1.4.1). */
#pragma once
#include <protobuf-c/protobuf-c.h>
