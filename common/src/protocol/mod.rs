//! The PostgreSQL v3 wire protocol: messages in both directions and
//! tokio-util codecs for the server side and the client side. OWNER: P.
