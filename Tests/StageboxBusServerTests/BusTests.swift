import Testing

/// Every suite that runs a bus fixture runs inside this one, one test at a time: each fixture has
/// a SCHED_FIFO audio thread, and two of them on a 2-core machine would disturb each other's timing.
@Suite(.serialized) struct BusTests {}
