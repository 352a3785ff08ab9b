//! The seek curve: seek time against cylinder distance, fitted to a datasheet's three figures.

use super::HddProfile;

/// seek(d) = a + b·√d for 1 ≤ d < d0, c + e·d for d ≥ d0 (ns), fitted so that seek(1) is the
/// track-to-track time, seek(C−1) the full stroke, the two parts meet at d0, and the mean over
/// uniformly random start and end cylinders is the average seek.
#[derive(Clone, Copy, Debug)]
pub struct SeekCurve {
    pub(super) a: f64,
    pub(super) b: f64,
    pub(super) c: f64,
    pub(super) e: f64,
    pub(super) d0: u32,
}

impl SeekCurve {
    pub fn fit(p: &HddProfile) -> SeekCurve {
        let cyl = f64::from(p.cylinders);
        let d0 = p.short_seek_cylinders;
        let (t2t, full, avg) = (
            p.track_to_track_seek_ns as f64,
            p.full_stroke_seek_ns as f64,
            p.average_seek_ns as f64,
        );
        // P(distance = d) for two independent uniform cylinders: 2(C−d)/C² (d ≥ 1).
        let (mut s0s, mut s1s, mut s0l, mut s1l) = (0.0, 0.0, 0.0, 0.0);
        for d in 1..p.cylinders {
            let df = f64::from(d);
            let pd = 2.0 * (cyl - df) / (cyl * cyl);
            if d < d0 {
                s0s += pd;
                s1s += pd * df.sqrt();
            } else {
                s0l += pd;
                s1l += pd * df;
            }
        }
        // a = t2t − b; c = full − e(C−1); continuity at d0 and the mean give two equations in b, e.
        let d0f = f64::from(d0);
        let (m11, m12, r1) = (d0f.sqrt() - 1.0, cyl - 1.0 - d0f, full - t2t);
        let (m21, m22, r2) = (
            s1s - s0s,
            s1l - (cyl - 1.0) * s0l,
            avg - t2t * s0s - full * s0l,
        );
        let det = m11 * m22 - m12 * m21;
        let b = (r1 * m22 - m12 * r2) / det;
        let e = (m11 * r2 - r1 * m21) / det;
        SeekCurve {
            a: t2t - b,
            b,
            c: full - e * (cyl - 1.0),
            e,
            d0,
        }
    }

    pub fn seek_ns(&self, distance: u32) -> u64 {
        if distance == 0 {
            0
        } else if distance < self.d0 {
            (self.a + self.b * f64::from(distance).sqrt()).round() as u64
        } else {
            (self.c + self.e * f64::from(distance)).round() as u64
        }
    }
}
