package statute

import "fmt"

// Date is a calendar date (proleptic Gregorian, no time zone), counted in
// days since 1970-01-01. Statute dates are whole days: effective dates,
// sunsets and /law?date= compare and add days, never clock times.
type Date int32

// ParseDate parses YYYY-MM-DD (a real calendar date, year 0001 to 9999).
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, fmt.Errorf("statute: date %q is not YYYY-MM-DD", trunc(s))
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, fmt.Errorf("statute: date %q is not a calendar date", s)
	}
	return fromCivil(y, m, d), nil
}

// MustDate is ParseDate for tests and constants; it panics on error.
func MustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// fromCivil and civil are H. Hinnant's days_from_civil / civil_from_days.
func fromCivil(y, m, d int) Date {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return Date(era*146097 + doe - 719468)
}

func (t Date) civil() (y, m, d int) {
	z := int(t) + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// String returns YYYY-MM-DD.
func (t Date) String() string {
	y, m, d := t.civil()
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}

// AddDays returns the date n days later.
func (t Date) AddDays(n int) Date { return t + Date(n) }

// MarshalText writes YYYY-MM-DD.
func (t Date) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses YYYY-MM-DD.
func (t *Date) UnmarshalText(b []byte) error {
	d, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*t = d
	return nil
}
