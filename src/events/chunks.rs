//! A capture's events in time order, a piece at a time: what a first pass over them reads
//! while a load is still packing them into the trace's store (the store's own walk would have
//! to wait for the whole of it).

use super::Event;
use std::sync::mpsc::{Receiver, Sender, SyncSender};

/// Events in time order, in pieces: each piece is lent until the next is asked for.
pub trait EventChunks {
    fn next_chunk(&mut self) -> Option<&[Event]>;
}

/// A bounded channel of pieces (the sender waits while `depth` pieces are unread: memory stays
/// bounded whichever side is faster) whose reader hands each piece's buffer back, emptied, for
/// the sender to fill again: a fresh buffer per piece cost a load a page fault every few
/// hundred items.
pub fn recycling_channel<T>(depth: usize) -> (PieceSender<T>, PieceReceiver<T>) {
    let (tx, rx) = std::sync::mpsc::sync_channel(depth);
    let (back_tx, back_rx) = std::sync::mpsc::channel();
    (
        PieceSender { tx, back: back_rx },
        PieceReceiver { rx, back: back_tx },
    )
}

/// The sending side of [`recycling_channel`].
pub struct PieceSender<T> {
    tx: SyncSender<Vec<T>>,
    back: Receiver<Vec<T>>,
}

impl<T> PieceSender<T> {
    /// An empty buffer for the next piece: one the reader is done with, else a new one.
    pub fn buffer(&self, capacity: usize) -> Vec<T> {
        self.back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(capacity))
    }

    /// Sends a piece; false once the reader is gone.
    pub fn send(&self, piece: Vec<T>) -> bool {
        self.tx.send(piece).is_ok()
    }
}

/// The reading side of [`recycling_channel`].
pub struct PieceReceiver<T> {
    rx: Receiver<Vec<T>>,
    back: Sender<Vec<T>>,
}

impl<T> PieceReceiver<T> {
    /// The next piece; `None` once the sender is gone and every piece has come.
    pub fn recv(&self) -> Option<Vec<T>> {
        self.rx.recv().ok()
    }

    /// Hands a piece's buffer back to the sender (dropped if the sender is done).
    pub fn give_back(&self, mut piece: Vec<T>) {
        if piece.capacity() > 0 {
            piece.clear();
            let _ = self.back.send(piece);
        }
    }
}

/// Events in pieces sent from another thread over a [`recycling_channel`].
pub struct ChannelChunks {
    pieces: PieceReceiver<Event>,
    current: Vec<Event>,
}

impl ChannelChunks {
    pub fn channel(depth: usize) -> (PieceSender<Event>, ChannelChunks) {
        let (tx, pieces) = recycling_channel(depth);
        (
            tx,
            ChannelChunks {
                pieces,
                current: Vec::new(),
            },
        )
    }
}

impl EventChunks for ChannelChunks {
    fn next_chunk(&mut self) -> Option<&[Event]> {
        let next = self.pieces.recv()?;
        let done = std::mem::replace(&mut self.current, next);
        self.pieces.give_back(done);
        Some(&self.current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventKind;

    fn evs(n: u64) -> Vec<Event> {
        (0..n)
            .map(|ts| Event {
                ts,
                tid: 1,
                cpu: 0,
                kind: EventKind::Tick,
            })
            .collect()
    }

    fn drain(c: &mut dyn EventChunks) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(p) = c.next_chunk() {
            assert!(!p.is_empty(), "no empty piece");
            out.extend(p.iter().map(|e| e.ts));
        }
        out
    }

    #[test]
    fn a_channel_hands_over_every_event_in_order() {
        let all = evs(10);
        let want: Vec<u64> = (0..10).collect();
        let (tx, mut rx) = ChannelChunks::channel(1);
        let h = std::thread::spawn(move || {
            for c in all.chunks(4) {
                assert!(tx.send(c.to_vec()), "the reader waits");
            }
        });
        assert_eq!(drain(&mut rx), want);
        h.join().expect("the sender ends");
    }

    #[test]
    fn a_piece_read_comes_back_to_be_filled_again() {
        let (tx, mut rx) = ChannelChunks::channel(2);
        let first = evs(5);
        let ptr = first.as_ptr();
        assert!(tx.send(first), "room for two");
        assert!(tx.send(evs(3)), "room for two");
        assert_eq!(rx.next_chunk().map(<[Event]>::len), Some(5));
        assert!(
            tx.buffer(1).is_empty(),
            "nothing read past yet: a new buffer"
        );
        assert_eq!(rx.next_chunk().map(<[Event]>::len), Some(3));
        let again = tx.buffer(1);
        assert!(
            again.is_empty() && again.as_ptr() == ptr,
            "the first piece's buffer, emptied"
        );
        drop(tx);
        assert!(rx.next_chunk().is_none());
    }
}
