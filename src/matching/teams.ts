/**
 * Team, club, esports-org and national-team knowledge for the matcher: canonical ids, the names
 * venues use for them (city, nickname, full name, common short forms) and the abbreviations that
 * appear in Kalshi tickers and Polymarket slugs. Written from general knowledge; it only has to be
 * good enough to say "these two strings name the same team", never to be complete.
 *
 * A team id is `<group>:<code>`, the group being the league for North-American leagues (NFL, NBA,
 * MLB, NHL, NCAAF), `SOC` for club soccer (one club plays in several competitions), `ESP` for
 * esports orgs (one org fields teams in several games) and `NAT` for national teams.
 */

/** One team: canonical id, display name, and every name it goes by. */
export interface TeamInfo {
  readonly id: string;
  /** NFL, NBA, MLB, NHL, NCAAF, SOC, ESP, NAT. */
  readonly group: string;
  readonly code: string;
  readonly name: string;
  readonly city: string;
  readonly nick: string;
  /** Folded names (see foldName) that identify this team. */
  readonly names: readonly string[];
  /** Upper-case abbreviations used in tickers and slugs. */
  readonly codes: readonly string[];
}

/** Sport of each team group. */
export const GROUP_SPORT: Readonly<Record<string, string>> = {
  NFL: 'football',
  NCAAF: 'football',
  NBA: 'basketball',
  MLB: 'baseball',
  NHL: 'hockey',
  SOC: 'soccer',
  NAT: 'soccer',
  ESP: 'esports',
};

// Rows: CODE|City|Nickname|alt codes (comma)|extra names (comma)|full-name override
const NFL = `
ARI|Arizona|Cardinals|ARZ
ATL|Atlanta|Falcons
BAL|Baltimore|Ravens
BUF|Buffalo|Bills
CAR|Carolina|Panthers
CHI|Chicago|Bears
CIN|Cincinnati|Bengals
CLE|Cleveland|Browns
DAL|Dallas|Cowboys
DEN|Denver|Broncos
DET|Detroit|Lions
GB|Green Bay|Packers|GNB
HOU|Houston|Texans
IND|Indianapolis|Colts
JAX|Jacksonville|Jaguars|JAC|Jags
KC|Kansas City|Chiefs|KAN
LV|Las Vegas|Raiders|LVR,OAK|Oakland Raiders
LAC|Los Angeles|Chargers||LA Chargers,Los Angeles C
LAR|Los Angeles|Rams|LA|LA Rams,Los Angeles R
MIA|Miami|Dolphins
MIN|Minnesota|Vikings
NE|New England|Patriots|NWE|Pats
NO|New Orleans|Saints|NOR
NYG|New York|Giants||NY Giants,New York G
NYJ|New York|Jets||NY Jets,New York J
PHI|Philadelphia|Eagles
PIT|Pittsburgh|Steelers
SF|San Francisco|49ers|SFO|Niners
SEA|Seattle|Seahawks
TB|Tampa Bay|Buccaneers|TAM|Bucs
TEN|Tennessee|Titans
WAS|Washington|Commanders|WSH
`;

const NBA = `
ATL|Atlanta|Hawks
BOS|Boston|Celtics
BKN|Brooklyn|Nets|BRK,BK
CHA|Charlotte|Hornets|CHO
CHI|Chicago|Bulls
CLE|Cleveland|Cavaliers||Cavs
DAL|Dallas|Mavericks||Mavs
DEN|Denver|Nuggets
DET|Detroit|Pistons
GSW|Golden State|Warriors|GS
HOU|Houston|Rockets
IND|Indiana|Pacers
LAC|Los Angeles|Clippers||LA Clippers,Los Angeles C
LAL|Los Angeles|Lakers||LA Lakers,Los Angeles L
MEM|Memphis|Grizzlies
MIA|Miami|Heat
MIL|Milwaukee|Bucks
MIN|Minnesota|Timberwolves||Wolves
NOP|New Orleans|Pelicans|NO,NOR
NYK|New York|Knicks|NY
OKC|Oklahoma City|Thunder
ORL|Orlando|Magic
PHI|Philadelphia|76ers||Sixers
PHX|Phoenix|Suns|PHO
POR|Portland|Trail Blazers||Blazers
SAC|Sacramento|Kings
SAS|San Antonio|Spurs|SA
TOR|Toronto|Raptors
UTA|Utah|Jazz|UTAH
WAS|Washington|Wizards|WSH
`;

const MLB = `
ARI|Arizona|Diamondbacks|AZ|D-backs,Dbacks
ATL|Atlanta|Braves
BAL|Baltimore|Orioles
BOS|Boston|Red Sox
CHC|Chicago|Cubs||Chicago C
CWS|Chicago|White Sox|CHW|Chicago WS
CIN|Cincinnati|Reds
CLE|Cleveland|Guardians
COL|Colorado|Rockies
DET|Detroit|Tigers
HOU|Houston|Astros
KC|Kansas City|Royals|KCR
LAA|Los Angeles|Angels|ANA|LA Angels,Los Angeles A,Anaheim
LAD|Los Angeles|Dodgers|LA|LA Dodgers,Los Angeles D
MIA|Miami|Marlins
MIL|Milwaukee|Brewers
MIN|Minnesota|Twins
NYM|New York|Mets||NY Mets,New York M
NYY|New York|Yankees||NY Yankees,New York Y
ATH|Oakland|Athletics|OAK|A's,Sacramento|Athletics
PHI|Philadelphia|Phillies
PIT|Pittsburgh|Pirates
SD|San Diego|Padres|SDP
SF|San Francisco|Giants|SFG
SEA|Seattle|Mariners
STL|St. Louis|Cardinals|SL|St Louis
TB|Tampa Bay|Rays|TBR
TEX|Texas|Rangers
TOR|Toronto|Blue Jays
WSH|Washington|Nationals|WAS,WSN|Nats
`;

const NHL = `
ANA|Anaheim|Ducks
BOS|Boston|Bruins
BUF|Buffalo|Sabres
CGY|Calgary|Flames
CAR|Carolina|Hurricanes
CHI|Chicago|Blackhawks
COL|Colorado|Avalanche
CBJ|Columbus|Blue Jackets
DAL|Dallas|Stars
DET|Detroit|Red Wings
EDM|Edmonton|Oilers
FLA|Florida|Panthers
LAK|Los Angeles|Kings|LA
MIN|Minnesota|Wild
MTL|Montreal|Canadiens||Montreal Canadiens
NSH|Nashville|Predators
NJD|New Jersey|Devils|NJ
NYI|New York|Islanders||NY Islanders,New York I
NYR|New York|Rangers||NY Rangers,New York R
OTT|Ottawa|Senators
PHI|Philadelphia|Flyers
PIT|Pittsburgh|Penguins
SJS|San Jose|Sharks|SJ
SEA|Seattle|Kraken
STL|St. Louis|Blues||St Louis
TBL|Tampa Bay|Lightning|TB
TOR|Toronto|Maple Leafs
UTA|Utah|Mammoth|UTAH|Utah Hockey Club
VAN|Vancouver|Canucks
VGK|Vegas|Golden Knights|VEG|Las Vegas
WSH|Washington|Capitals|WAS|Caps
WPG|Winnipeg|Jets
`;

const NCAAF = `
ALA|Alabama|Crimson Tide|BAMA
UGA|Georgia|Bulldogs|GA,GEO
OSU|Ohio State|Buckeyes|OHST
MICH|Michigan|Wolverines|UM
TEX|Texas|Longhorns|UT
ORE|Oregon|Ducks
PSU|Penn State|Nittany Lions
ND|Notre Dame|Fighting Irish
CLEM|Clemson|Tigers
LSU|LSU|Tigers
USC|USC|Trojans||Southern California
FSU|Florida State|Seminoles
FLA|Florida|Gators|UF
TENN|Tennessee|Volunteers|TEN|Vols
OU|Oklahoma|Sooners|OKLA
TAMU|Texas A&M|Aggies|TXAM
MIAF|Miami (FL)|Hurricanes|MIAMI|Miami Hurricanes,Miami
MISS|Ole Miss|Rebels|OLEM
AUB|Auburn|Tigers
WIS|Wisconsin|Badgers|WISC
IOWA|Iowa|Hawkeyes
UTAH|Utah|Utes
WASH|Washington|Huskies|UW
MIZ|Missouri|Tigers|MIZZ|Mizzou
IND|Indiana|Hoosiers|IU
KSU|Kansas State|Wildcats|KSST
SMU|SMU|Mustangs
BSU|Boise State|Broncos|BOIS
ASU|Arizona State|Sun Devils|ARST
BYU|BYU|Cougars
TTU|Texas Tech|Red Raiders|TTECH
COLO|Colorado|Buffaloes|CU
LOU|Louisville|Cardinals|LOUI
SCAR|South Carolina|Gamecocks|SC
NEB|Nebraska|Cornhuskers
UCLA|UCLA|Bruins
UK|Kentucky|Wildcats|KEN
OKST|Oklahoma State|Cowboys|OKS
BAY|Baylor|Bears|BAYL
TCU|TCU|Horned Frogs
VT|Virginia Tech|Hokies
UNC|North Carolina|Tar Heels
DUKE|Duke|Blue Devils
ISU|Iowa State|Cyclones
ILL|Illinois|Fighting Illini
MINN|Minnesota|Golden Gophers
MSU|Michigan State|Spartans
ARK|Arkansas|Razorbacks
MSST|Mississippi State|Bulldogs
VAN|Vanderbilt|Commodores|VANDY
`;

// Club soccer: city = nickname = name (venues name clubs one way); rows CODE|Name|alt codes|extra names
const SOCCER = `
ARS|Arsenal
AVL|Aston Villa|AV
BOU|Bournemouth||AFC Bournemouth
BRE|Brentford
BHA|Brighton|BRI|Brighton & Hove Albion,Brighton and Hove Albion
BUR|Burnley
CHE|Chelsea|CFC
CRY|Crystal Palace|CPA
EVE|Everton
FUL|Fulham
LEE|Leeds United|LEEDS|Leeds
LIV|Liverpool|LFC
MCI|Manchester City|MNC,MANC|Man City
MUN|Manchester United|MNU,MANU|Man United,Man Utd
NEW|Newcastle United|NCL,NEWC|Newcastle
NFO|Nottingham Forest|NOT,NOTT|Nottm Forest,Forest
SUN|Sunderland
TOT|Tottenham Hotspur|TOTT|Tottenham,Spurs
WHU|West Ham United|WHM|West Ham
WOL|Wolverhampton Wanderers|WOLV|Wolves,Wolverhampton
IPS|Ipswich Town||Ipswich
LEI|Leicester City||Leicester
SOU|Southampton
RMA|Real Madrid|RM
BAR|Barcelona|FCB,BARCA|FC Barcelona,Barca
ATM|Atletico Madrid|ATL,ATMA|Atletico de Madrid,Atletico,Club Atletico de Madrid,Atleti
ATH|Athletic Bilbao|ATHB|Athletic Club
RSO|Real Sociedad||Real Sociedad de Futbol
VIL|Villarreal
BET|Real Betis||Betis,Real Betis Balompie
SEV|Sevilla|SFC
VAL|Valencia
GIR|Girona
ESP|Espanyol|ESY|RCD Espanyol,RCD Espanyol de Barcelona
GET|Getafe||Getafe CF
MLL|Mallorca|MAL|RCD Mallorca
RAY|Rayo Vallecano|RVM|Rayo
ALA|Alaves|ALV|Deportivo Alaves
CEL|Celta Vigo||Celta,Celta de Vigo,RC Celta de Vigo,RC Celta
OSA|Osasuna||CA Osasuna
INT|Inter|INTER|Inter Milan,Internazionale,Internazionale Milano,Inter Milano
MIL|AC Milan|ACM|Milan
JUV|Juventus
NAP|Napoli|SSC Napoli
ROM|Roma|ASR|AS Roma
LAZ|Lazio||SS Lazio
TOR|Torino||Torino FC
GEN|Genoa||Genoa CFC
UDI|Udinese||Udinese Calcio
ATA|Atalanta||Atalanta BC
FIO|Fiorentina||ACF Fiorentina
BOL|Bologna||Bologna FC 1909
COM|Como||Como 1907
BAY|Bayern Munich|FCB,BAYERN|Bayern,FC Bayern,Bayern Munchen
DOR|Borussia Dortmund|BVB|Dortmund
LEV|Bayer Leverkusen|B04|Leverkusen,Bayer 04 Leverkusen
HOF|Hoffenheim|TSG|TSG Hoffenheim,TSG 1899 Hoffenheim
SCF|Freiburg|FRE|SC Freiburg
UNB|Union Berlin|FCU|1 FC Union Berlin,FC Union Berlin
WOB|Wolfsburg||VfL Wolfsburg
BMG|Borussia Monchengladbach|GLA|Monchengladbach,Gladbach,Borussia Mgladbach
SVW|Werder Bremen|WER|SV Werder Bremen,Bremen
M05|Mainz|MAI|Mainz 05,FSV Mainz 05,1 FSV Mainz 05
RBL|RB Leipzig|LEI|Leipzig
SGE|Eintracht Frankfurt|FRA,EIN|Frankfurt
VFB|Stuttgart|STU|VfB Stuttgart
PSG|Paris Saint-Germain|PSG|Paris SG,Paris Saint Germain,PSG
MAR|Marseille|OM|Olympique de Marseille
MON|Monaco|ASM|AS Monaco,AS Monaco FC
LYO|Lyon|OL|Olympique Lyonnais
NIC|Nice|OGCN|OGC Nice
RCL|Lens|LENS|RC Lens
REN|Rennes|SRFC|Stade Rennais,Stade Rennais FC,Stade Rennais FC 1901
STR|Strasbourg|RCSA|RC Strasbourg,RC Strasbourg Alsace
LIL|Lille|LOSC|LOSC Lille,LOSC
BEN|Benfica|SLB|Sport Lisboa e Benfica,SL Benfica
POR|Porto|FCP|FC Porto
SCP|Sporting CP|SPO|Sporting,Sporting Lisbon
AJA|Ajax|AJX
PSV|PSV Eindhoven||PSV
FEY|Feyenoord
CELT|Celtic
BRU|Club Brugge|CLUB|Club Brugge KV
GAL|Galatasaray|GS|Galatasaray SK
MIAI|Inter Miami|MIA|Inter Miami CF
LAG|LA Galaxy||Los Angeles Galaxy
LAFC|Los Angeles FC|LAF|LAFC
SEAS|Seattle Sounders|SEA|Seattle Sounders FC
CLB|Columbus Crew|CLB|Columbus
`;

// Esports orgs: CODE|Name|alt codes|extra names
const ESPORTS = `
T1|T1
GEN|Gen.G|GENG|Gen G,GenG
G2|G2 Esports||G2
FNC|Fnatic
TL|Team Liquid|LIQ|Liquid
BLG|Bilibili Gaming||Bilibili
JDG|JD Gaming
TES|Top Esports
HLE|Hanwha Life Esports||Hanwha Life
KT|KT Rolster||KT
DK|Dplus KIA|DPLUS|Dplus
WBG|Weibo Gaming
C9|Cloud9
100T|100 Thieves
FLY|FlyQuest
TH|Team Heretics||Heretics
MKOI|Movistar KOI||KOI
KC|Karmine Corp||Karmine
VIT|Team Vitality||Vitality
NAVI|Natus Vincere||NaVi
FAZE|FaZe Clan||FaZe
MOUZ|MOUZ
SPIRIT|Team Spirit|TS|Spirit
AST|Astralis
HER|Heroic
ENCE|ENCE
VP|Virtus.pro||Virtus pro
COL|Complexity||Complexity Gaming
MONG|The MongolZ|MGZ|MongolZ
EF|Eternal Fire
FUR|FURIA|FURIA|FURIA Esports
PAIN|paiN Gaming||paiN
NRG|NRG
SEN|Sentinels
EG|Evil Geniuses
FLC|Team Falcons||Falcons
PARI|PARIVISION
3DM|3DMAX
AUR|Aurora||Aurora Gaming
MIBR|MIBR
PRX|Paper Rex
EDG|EDward Gaming
LOUD|LOUD
DRX|DRX
GX|GIANTX
NIP|Ninjas in Pyjamas
GG|Gaimin Gladiators
TUN|Tundra Esports||Tundra
XG|Xtreme Gaming
BB|BetBoom Team||BetBoom
SECRET|Team Secret
`;

// National teams: ISO3/FIFA code|Name|alt codes (ISO2 first)|extra names
const NATIONS = `
ARG|Argentina|AR
AUS|Australia|AU
AUT|Austria|AT
BEL|Belgium|BE
BOL|Bolivia|BO
BIH|Bosnia and Herzegovina|BA|Bosnia,Bosnia-Herzegovina
BRA|Brazil|BR
CMR|Cameroon|CM
CAN|Canada|CA
CPV|Cape Verde|CV|Cabo Verde
CHI|Chile|CL
COL|Colombia|CO
CRC|Costa Rica|CR
CRO|Croatia|HR
CUW|Curacao|CW
CZE|Czechia|CZ|Czech Republic
DEN|Denmark|DK
COD|DR Congo|CD|Congo DR
ECU|Ecuador|EC
EGY|Egypt|EG
ENG|England|GB,EN
FRA|France|FR
GER|Germany|DE
GHA|Ghana|GH
GRE|Greece|GR
HAI|Haiti|HT
HUN|Hungary|HU
ISL|Iceland|IS
IRN|Iran|IR|IR Iran
IRQ|Iraq|IQ
IRL|Ireland|IE|Republic of Ireland
ITA|Italy|IT
CIV|Ivory Coast|CI|Cote d'Ivoire,Cote dIvoire
JAM|Jamaica|JM
JPN|Japan|JP
JOR|Jordan|JO
KOR|South Korea|KR|Korea Republic,Korea
MEX|Mexico|MX
MAR|Morocco|MA
NED|Netherlands|NL|the Netherlands,Holland
NZL|New Zealand|NZ
NGA|Nigeria|NG
NIR|Northern Ireland|ND
NOR|Norway|NO
PAN|Panama|PA
PAR|Paraguay|PY
PER|Peru|PE
POL|Poland|PL
POR|Portugal|PT
QAT|Qatar|QA
ROU|Romania|RO
KSA|Saudi Arabia|SA
SCO|Scotland|SC
SEN|Senegal|SN
SRB|Serbia|RS
SVK|Slovakia|SK
SVN|Slovenia|SI
RSA|South Africa|ZA
ESP|Spain|ES
SWE|Sweden|SE
SUI|Switzerland|CH
TUN|Tunisia|TN
TUR|Turkey|TR|Turkiye
UKR|Ukraine|UA
USA|United States|US|USA,USMNT,United States of America
URU|Uruguay|UY
UZB|Uzbekistan|UZ
WAL|Wales|WA
ALG|Algeria|DZ
`;

/** Lower-case, accent-free, punctuation-free form used as a name key. */
export function foldName(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/['’.]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

const TEAMS: TeamInfo[] = [];
const BY_ID = new Map<string, TeamInfo>();
const BY_NAME = new Map<string, string[]>();
const BY_CODE = new Map<string, Map<string, string[]>>();

function addName(name: string, id: string): void {
  const k = foldName(name);
  if (!k) return;
  const ids = BY_NAME.get(k);
  if (!ids) BY_NAME.set(k, [id]);
  else if (!ids.includes(id)) ids.push(id);
}

function addCode(group: string, code: string, id: string): void {
  let m = BY_CODE.get(group);
  if (!m) BY_CODE.set(group, (m = new Map()));
  const ids = m.get(code);
  if (!ids) m.set(code, [id]);
  else if (!ids.includes(id)) ids.push(id);
}

function add(t: TeamInfo): void {
  TEAMS.push(t);
  BY_ID.set(t.id, t);
  for (const n of t.names) addName(n, t.id);
  for (const c of t.codes) addCode(t.group, c, t.id);
}

function rows(block: string): string[][] {
  return block
    .trim()
    .split('\n')
    .map((l) => l.split('|').map((s) => s.trim()));
}

function list(s: string | undefined): string[] {
  return s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x.length > 0)
    : [];
}

for (const [group, block] of [
  ['NFL', NFL],
  ['NBA', NBA],
  ['MLB', MLB],
  ['NHL', NHL],
  ['NCAAF', NCAAF],
] as const) {
  for (const [code, city, nick, alts, extra, full] of rows(block)) {
    const name = full || `${city} ${nick}`;
    const names = [name, `${city} ${nick}`, nick!, city!, ...list(extra)];
    // Schools are often written "Ohio St." / "Penn St.".
    if (city!.endsWith(' State')) names.push(`${city!.slice(0, -6)} St`, `${city!.slice(0, -6)} St ${nick}`);
    add({ id: `${group}:${code}`, group, code: code!, name, city: city!, nick: nick!, names, codes: [code!, ...list(alts)] });
  }
}
for (const [group, block] of [
  ['SOC', SOCCER],
  ['ESP', ESPORTS],
  ['NAT', NATIONS],
] as const) {
  for (const [code, name, alts, extra] of rows(block)) {
    add({ id: `${group}:${code}`, group, code: code!, name: name!, city: name!, nick: name!, names: [name!, ...list(extra)], codes: [code!, ...list(alts)] });
  }
}

/** The team with this id (an individual's id is made up on the spot: see personId). */
export function teamById(id: string): TeamInfo | undefined {
  const t = BY_ID.get(id);
  if (t || !id.startsWith(`${INDIVIDUAL}:`)) return t;
  const surname = id.slice(INDIVIDUAL.length + 1);
  const name = surname.replace(/(^|\s)\S/g, (c) => c.toUpperCase());
  return { id, group: INDIVIDUAL, code: surname.slice(0, 3).toUpperCase(), name, city: name, nick: name, names: [surname], codes: [] };
}

/**
 * The team group of one-on-one sports (tennis, MMA, boxing): no table of players, each competitor
 * is identified by surname within the game (the blocking key also carries the day and the opponent).
 */
export const INDIVIDUAL = 'IND';
const NAME_SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv']);

/**
 * An individual competitor's id from a name as titles write it ("Jannik Sinner", "Sinner",
 * "J. Sinner (ITA)", "Alex Pereira - Round 1"): `IND:<surname>`, or undefined when the text does
 * not look like a person's name (1 to 4 words of letters).
 */
export function personId(name: string): string | undefined {
  // "UFC 322: Della Maddalena" (a label before "X:") and "Alcaraz : Final" / "Pereira - Round 1" (a qualifier after " :").
  const core = name
    .replace(/\(.*?\)/g, ' ')
    .replace(/^.*\S:\s+/, '')
    .replace(/\s+[-–:|](?:\s.*)?$/, '');
  const words = foldName(core)
    .split(' ')
    .filter((w) => w.length > 0 && !NAME_SUFFIXES.has(w));
  if (words.length === 0 || words.length > 4 || !words.every((w) => /^[a-z]+$/.test(w))) return undefined;
  const last = words[words.length - 1]!;
  // "de Minaur", "van de Zandschulp", "Della Maddalena": particles belong to the surname.
  let i = words.length - 1;
  while (i > 0 && /^(de|da|del|della|di|van|von|der|den|le|la|dos|du|st|mc|mac|al|el|ben|bin)$/.test(words[i - 1]!)) i--;
  const surname = i < words.length - 1 ? words.slice(i).join(' ') : last;
  return last.length >= 2 ? `${INDIVIDUAL}:${surname}` : undefined;
}

/** Every known team (for tests and diagnostics). */
export function allTeams(): readonly TeamInfo[] {
  return TEAMS;
}

/**
 * Ids of the teams a name may refer to, restricted to `groups` when given. "Seattle" alone is
 * ambiguous across leagues (Seahawks, Mariners, Kraken, …); callers narrow it with a league hint
 * or with the other team of the game. A leading "the" is ignored ("the Norway" is Norway).
 */
export function teamsByName(name: string, groups?: readonly string[]): string[] {
  if (groups?.includes(INDIVIDUAL)) {
    const p = personId(name);
    return p ? [p] : [];
  }
  const ids = namedIds(name);
  return groups && groups.length > 0 ? ids.filter((id) => groups.includes(id.slice(0, id.indexOf(':')))) : ids.slice();
}

// Titles repeat the same few thousand names: remember what a raw name folded to (bounded).
const NAME_MEMO = new Map<string, readonly string[]>();
const NO_IDS: readonly string[] = [];

function namedIds(name: string): readonly string[] {
  const hit = NAME_MEMO.get(name);
  if (hit) return hit;
  let k = foldName(name);
  if (k.startsWith('the ') && !BY_NAME.has(k)) k = k.slice(4);
  // Club-name decorations: "Arsenal FC", "FC Barcelona", "Inter Miami CF".
  if (!BY_NAME.has(k)) k = k.replace(/^(?:fc|cf|afc|ac|as|ssc|sc) /, '').replace(/ (?:fc|cf|sc|afc)$/, '');
  const ids = BY_NAME.get(k) ?? NO_IDS;
  if (NAME_MEMO.size >= 50_000) NAME_MEMO.clear();
  NAME_MEMO.set(name, ids);
  return ids;
}

/** Ids of the teams an abbreviation (ticker or slug code, any case) may refer to within `groups`. */
export function teamsByCode(code: string, groups: readonly string[]): string[] {
  const c = code.toUpperCase();
  const out: string[] = [];
  for (const g of groups) for (const id of BY_CODE.get(g)?.get(c) ?? []) if (!out.includes(id)) out.push(id);
  return out;
}

/**
 * Splits a ticker's concatenated team codes ("NESEA", "BUFJAC", "NYKPHX") into two known codes of
 * the given groups. Undefined when no split, or more than one split, names two known teams.
 */
export function splitTeamCodes(s: string, groups: readonly string[]): [string, string] | undefined {
  let found: [string, string] | undefined;
  for (let i = 2; i <= s.length - 2; i++) {
    const a = teamsByCode(s.slice(0, i), groups);
    const b = teamsByCode(s.slice(i), groups);
    if (a.length === 1 && b.length === 1 && a[0] !== b[0]) {
      if (found) return undefined;
      found = [a[0]!, b[0]!];
    }
  }
  return found;
}

/** The team group of an id ("NFL" for "NFL:SEA"). */
export function groupOf(id: string): string {
  return id.slice(0, id.indexOf(':'));
}

/**
 * Leagues and competitions: the code venues use in tickers and slugs → the team groups whose teams
 * play in it, its sport, and whether a game can end in a draw (a draw breaks the complement
 * between "A wins" and "B wins").
 */
export interface LeagueInfo {
  readonly league: string;
  readonly sport: string;
  readonly groups: readonly string[];
  readonly draws: boolean;
}

const LEAGUE_ROWS: readonly LeagueInfo[] = [
  { league: 'NFL', sport: 'football', groups: ['NFL'], draws: false },
  { league: 'NBA', sport: 'basketball', groups: ['NBA'], draws: false },
  { league: 'MLB', sport: 'baseball', groups: ['MLB'], draws: false },
  { league: 'NHL', sport: 'hockey', groups: ['NHL'], draws: false },
  { league: 'NCAAF', sport: 'football', groups: ['NCAAF'], draws: false },
  { league: 'EPL', sport: 'soccer', groups: ['SOC'], draws: true },
  { league: 'LALIGA', sport: 'soccer', groups: ['SOC'], draws: true },
  { league: 'SERIEA', sport: 'soccer', groups: ['SOC'], draws: true },
  { league: 'BUNDESLIGA', sport: 'soccer', groups: ['SOC'], draws: true },
  { league: 'LIGUE1', sport: 'soccer', groups: ['SOC'], draws: true },
  { league: 'UCL', sport: 'soccer', groups: ['SOC'], draws: true },
  { league: 'UEL', sport: 'soccer', groups: ['SOC'], draws: true },
  { league: 'MLS', sport: 'soccer', groups: ['SOC'], draws: true },
  { league: 'WC', sport: 'soccer', groups: ['NAT'], draws: true },
  { league: 'LOL', sport: 'esports', groups: ['ESP'], draws: false },
  { league: 'CS2', sport: 'esports', groups: ['ESP'], draws: false },
  { league: 'VALORANT', sport: 'esports', groups: ['ESP'], draws: false },
  { league: 'DOTA2', sport: 'esports', groups: ['ESP'], draws: false },
  // One-on-one sports: one league per sport (venues split tours differently: ATP/WTA, UFC/PFL).
  { league: 'TENNIS', sport: 'tennis', groups: ['IND'], draws: false },
  { league: 'MMA', sport: 'mma', groups: ['IND'], draws: true },
  { league: 'BOXING', sport: 'boxing', groups: ['IND'], draws: true },
];

const LEAGUE_BY_NAME = new Map<string, LeagueInfo>(LEAGUE_ROWS.map((l) => [l.league, l]));

/** Aliases of league codes as they appear in Kalshi series and Polymarket slugs. */
const LEAGUE_ALIASES: Readonly<Record<string, string>> = {
  NFL: 'NFL',
  NBA: 'NBA',
  MLB: 'MLB',
  NHL: 'NHL',
  NCAAF: 'NCAAF',
  NCAAFB: 'NCAAF',
  CFB: 'NCAAF',
  EPL: 'EPL',
  PREMIERLEAGUE: 'EPL',
  LALIGA: 'LALIGA',
  LAL: 'LALIGA',
  SERIEA: 'SERIEA',
  SEA: 'SERIEA',
  BUNDESLIGA: 'BUNDESLIGA',
  BUN: 'BUNDESLIGA',
  LIGUE1: 'LIGUE1',
  FL1: 'LIGUE1',
  UCL: 'UCL',
  UEL: 'UEL',
  MLS: 'MLS',
  WC: 'WC',
  FIFWC: 'WC',
  WORLDCUP: 'WC',
  LOL: 'LOL',
  CS2: 'CS2',
  CSGO: 'CS2',
  CS: 'CS2',
  VAL: 'VALORANT',
  VALORANT: 'VALORANT',
  DOTA2: 'DOTA2',
  DOTA: 'DOTA2',
  ATP: 'TENNIS',
  WTA: 'TENNIS',
  TENNIS: 'TENNIS',
  UFC: 'MMA',
  MMA: 'MMA',
  PFL: 'MMA',
  BOXING: 'BOXING',
};

/** The league for a code ("NFL", "nfl", "fifwc", "KXEPL…" stripped of KX), if known. */
export function leagueByCode(code: string): LeagueInfo | undefined {
  const l = LEAGUE_ALIASES[code.toUpperCase()];
  return l ? LEAGUE_BY_NAME.get(l) : undefined;
}

/** The league row by its canonical name. */
export function leagueInfo(league: string): LeagueInfo | undefined {
  return LEAGUE_BY_NAME.get(league);
}

/** Canonical league codes, longest first (for prefix matching Kalshi series tickers). */
export const LEAGUE_CODES_LONGEST_FIRST: readonly string[] = Object.keys(LEAGUE_ALIASES).sort((a, b) => b.length - a.length);
