//! The engine alone, no I/O: the classifier, the decoder and its JSON
//! cursor, the SSE framer, the reducer and registry, the seed and SDK
//! fixtures, properties, and reuse of a stream's decoding.

mod classify;
mod cross;
mod decode;
mod docs;
mod fixtures;
mod framer;
mod json;
mod kinds;
mod layout;
mod prop;
mod reuse;
mod shapes;
mod speed;
mod world;
