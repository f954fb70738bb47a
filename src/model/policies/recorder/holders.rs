//! Who holds each CID of each mm, for the ABI alarms (a duplicate CID, one out of range).

use crate::events::Tid;
use crate::model::tasks::MmId;
use rustc_hash::FxHashMap;

/// (mm, CID) → the running task holding it: a row per mm indexed by CID, as mm ids are a
/// timeline's dense index and CIDs stay below the CPU count (a hash per switch was 4 % of a
/// summary's replay); a map for what lies past those rows.
#[derive(Clone, Default)]
pub struct Holders {
    rows: Vec<Vec<Option<Tid>>>,
    rest: FxHashMap<(MmId, u32), Tid>,
}

impl Holders {
    const ROW_MMS: u32 = 1 << 20;
    const ROW_CIDS: u32 = 1 << 12;

    fn in_rows((mm, cid): (MmId, u32)) -> bool {
        mm.0 < Self::ROW_MMS && cid < Self::ROW_CIDS
    }

    pub fn get(&self, key: (MmId, u32)) -> Option<Tid> {
        if Self::in_rows(key) {
            let row = self.rows.get(key.0.0 as usize)?;
            row.get(key.1 as usize).copied().flatten()
        } else {
            self.rest.get(&key).copied()
        }
    }

    pub fn remove(&mut self, key: (MmId, u32)) {
        if Self::in_rows(key) {
            if let Some(h) =
                (self.rows.get_mut(key.0.0 as usize)).and_then(|r| r.get_mut(key.1 as usize))
            {
                *h = None;
            }
        } else {
            self.rest.remove(&key);
        }
    }

    pub fn insert(&mut self, key: (MmId, u32), tid: Tid) {
        if !Self::in_rows(key) {
            self.rest.insert(key, tid);
            return;
        }
        let (m, c) = (key.0.0 as usize, key.1 as usize);
        if self.rows.len() <= m {
            self.rows.resize_with(m + 1, Vec::new);
        }
        let row = &mut self.rows[m];
        if row.len() <= c {
            row.resize(c + 1, None);
        }
        row[c] = Some(tid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holders_read_back_in_rows_and_past_them() {
        let mut h = Holders::default();
        let keys = [
            (MmId(0), 0),
            (MmId(3), 7),
            (MmId(Holders::ROW_MMS), 1),
            (MmId(2), Holders::ROW_CIDS),
            (MmId::UNKNOWN, 0),
        ];
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(h.get(k), None);
            h.insert(k, 100 + i as Tid);
        }
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(h.get(k), Some(100 + i as Tid), "{k:?}");
        }
        assert_eq!(h.get((MmId(3), 6)), None, "a row's other CIDs");
        assert_eq!(h.get((MmId(1), 0)), None, "a row grown past, never set");
        for &k in &keys {
            h.remove(k);
            assert_eq!(h.get(k), None);
        }
        h.remove((MmId(40), 2));
    }
}
