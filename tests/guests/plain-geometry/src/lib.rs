//! Records and variants as plain exports: a geometry toolbox written for any host.

wit_bindgen::generate!({ path: "wit", world: "geometry" });

use exports::example::geometry::shapes::{Guest, Measured, Point, Rectangle, Shape, Unit};

struct Component;

fn polygon_area_and_centroid(points: &[Point]) -> (f64, Option<Point>) {
    if points.len() < 3 {
        return (0.0, None);
    }
    let (mut twice_area, mut cx, mut cy) = (0.0, 0.0, 0.0);
    for (a, b) in points.iter().zip(points.iter().cycle().skip(1)) {
        let cross = a.x * b.y - b.x * a.y;
        twice_area += cross;
        cx += (a.x + b.x) * cross;
        cy += (a.y + b.y) * cross;
    }
    if twice_area == 0.0 {
        return (0.0, None);
    }
    (twice_area.abs() / 2.0, Some(Point { x: cx / (3.0 * twice_area), y: cy / (3.0 * twice_area) }))
}

fn bounds(shape: &Shape) -> Option<(f64, f64, f64, f64)> {
    match shape {
        Shape::Circle((c, r)) => Some((c.x - r, c.y - r, c.x + r, c.y + r)),
        Shape::Rectangle(r) => Some((r.corner.x, r.corner.y, r.corner.x + r.width, r.corner.y + r.height)),
        Shape::Polygon(points) => points.iter().fold(None, |acc, p| {
            let (x0, y0, x1, y1) = acc.unwrap_or((p.x, p.y, p.x, p.y));
            Some((x0.min(p.x), y0.min(p.y), x1.max(p.x), y1.max(p.y)))
        }),
    }
}

impl Guest for Component {
    fn measure(shape: Shape) -> Measured {
        match shape {
            Shape::Circle((center, radius)) => Measured {
                area: std::f64::consts::PI * radius * radius,
                perimeter: 2.0 * std::f64::consts::PI * radius,
                centroid: Some(center),
            },
            Shape::Rectangle(r) => Measured {
                area: r.width * r.height,
                perimeter: 2.0 * (r.width + r.height),
                centroid: Some(Point { x: r.corner.x + r.width / 2.0, y: r.corner.y + r.height / 2.0 }),
            },
            Shape::Polygon(points) => {
                let perimeter = points
                    .iter()
                    .zip(points.iter().cycle().skip(1))
                    .map(|(a, b)| ((b.x - a.x).powi(2) + (b.y - a.y).powi(2)).sqrt())
                    .sum();
                let (area, centroid) = polygon_area_and_centroid(&points);
                Measured { area, perimeter, centroid }
            }
        }
    }

    fn bounding_box(shapes: Vec<Shape>) -> Option<Rectangle> {
        let (x0, y0, x1, y1) =
            shapes.iter().filter_map(bounds).reduce(|a, b| (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3)))?;
        Some(Rectangle { corner: Point { x: x0, y: y0 }, width: x1 - x0, height: y1 - y0 })
    }

    fn convert(length: f64, from: Unit, to: Unit) -> Result<f64, String> {
        if !length.is_finite() {
            return Err(format!("{length} is not a length"));
        }
        let metres = match from {
            Unit::Metres => length,
            Unit::Feet => length * 0.3048,
        };
        Ok(match to {
            Unit::Metres => metres,
            Unit::Feet => metres / 0.3048,
        })
    }
}

export!(Component);
