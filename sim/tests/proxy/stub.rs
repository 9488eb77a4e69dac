//! A second upstream, written in Python (standard library only): the proxy's checks come
//! from the documents, not from the simulator's habits.
